package dev.baton.redis;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.unique;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.net.URL;

import org.junit.jupiter.api.Test;

import dev.baton.testing.LogCapture;
import dev.baton.testing.RestartableRedisResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;

@QuarkusTest
@WithTestResource(RestartableRedisResource.class)
class RedisRestartTest extends BackendScenarios {

    // Management URLs are relative to its root path, /q.
    @TestHTTPResource(value = "/health", management = true)
    URL health;

    @Test
    void given_redis_dies_then_fast_503s_ready_down_live_up_and_after_its_restart_the_service_heals_by_itself()
            throws Exception {
        String lcid = unique("order");
        String token = acquire(lcid, "before").then().statusCode(200).extract().path("token");
        LogCapture log = LogCapture.start();

        RestartableRedisResource.stopRedis();
        long stopped = System.nanoTime();

        then_every_operation_answers_503_backend_unavailable_quickly();
        given().get(health + "/ready").then().statusCode(503).body("status", equalTo("DOWN"));
        given().get(health + "/live").then().statusCode(200).body("status", equalTo("UP"));

        RestartableRedisResource.startRedis();
        long restarted = System.nanoTime();
        while (given().get(health + "/ready").statusCode() != 200) {
            assertThat((System.nanoTime() - restarted) / 1_000_000).as("ms until ready again").isLessThan(15_000);
            Thread.sleep(100);
        }
        long healedMs = (System.nanoTime() - restarted) / 1_000_000;
        long outageMs = (System.nanoTime() - stopped) / 1_000_000;

        // Only probes ran since Redis came back, no API call: the recovery is already in the log,
        // and the time it gives is the outage's, not the time until the next API call.
        java.util.regex.Pattern again = java.util.regex.Pattern.compile("Redis answers again, after (\\d+) ms");
        java.util.regex.Matcher back = log.lines().stream().map(again::matcher).filter(java.util.regex.Matcher::find)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no 'Redis answers again' line after the probes: " + log.lines()));
        long reportedMs = Long.parseLong(back.group(1));
        assertThat(reportedMs).as(back.group()).isLessThanOrEqualTo(outageMs);
        log.stop();

        // The AOF kept the lock; the scripts are sent again because the new server has none cached.
        complete(lcid, token, "before").then().statusCode(200).body("status", equalTo("RELEASED"));
        acquire(unique("order"), "after").then().statusCode(200).body("status", equalTo("ACQUIRED"));
        System.out.printf("redis restart: ready again %d ms after redis-server came back%n", healedMs);
    }
}
