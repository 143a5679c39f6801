package dev.baton.ops;

import static dev.baton.testing.Api.acquire;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import java.net.URL;
import java.util.Set;

import org.junit.jupiter.api.Test;

import dev.baton.testing.ForeignLayoutRedisResource;
import dev.baton.testing.Metrics;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import redis.clients.jedis.Jedis;

/**
 * Two layouts on one Redis would mean two locks for one lcid: a replica started on a Redis whose
 * Baton data is in a layout it does not know stays unready, says why (log, metric, readiness
 * data), refuses every call and writes nothing; once the Redis holds no foreign data any more
 * (the other release drained and gone), the next readiness probe claims it and the replica serves.
 */
@QuarkusTest
@WithTestResource(ForeignLayoutRedisResource.class)
class LayoutGuardTest {

    @TestHTTPResource(value = "/health", management = true)
    URL health;

    @TestHTTPResource(value = "/metrics", management = true)
    URL metrics;

    @Test
    void given_redis_in_another_layout_then_the_replica_stays_unready_and_writes_nothing_until_that_layout_is_gone() {
        Set<String> before;
        try (Jedis redis = ForeignLayoutRedisResource.jedis()) {
            before = redis.keys("*");
        }

        // A future layout (3): unready, with the cause.
        given().get(health + "/ready").then().statusCode(503).body("status", equalTo("DOWN"))
                .body("checks.find { it.name == 'baton-lock-store' }.data.reason", containsString("layout 3"));
        acquire("order-1", "a").then().statusCode(503).contentType("application/problem+json")
                .body("code", equalTo("BACKEND_UNAVAILABLE"));
        assertThat(Metrics.scrape(metrics.toString()).value("baton_layout_refused")).isEqualTo(1.0);

        // A release from before layout versions: no version stored, but busy lcids.
        try (Jedis redis = ForeignLayoutRedisResource.jedis()) {
            redis.del("baton:default:layout");
            redis.zadd("baton:default:busy", 1, "order-1");
        }
        given().get(health + "/ready").then().statusCode(503).body("checks.find { it.name == 'baton-lock-store' }.data.reason", containsString("layout 1"));
        acquire("order-1", "a").then().statusCode(503);
        try (Jedis redis = ForeignLayoutRedisResource.jedis()) {
            assertThat(redis.keys("*")).as("nothing written by the refusing replica")
                    .containsExactlyInAnyOrder("baton:default:busy", ForeignLayoutRedisResource.FOREIGN_KEY);
            assertThat(redis.hget(ForeignLayoutRedisResource.FOREIGN_KEY, "lock")).isEqualTo("a future grant");
            assertThat(before).contains("baton:default:layout", ForeignLayoutRedisResource.FOREIGN_KEY);

            // The old release drained: nothing of it is left. The next probe claims the Redis.
            redis.del("baton:default:busy", ForeignLayoutRedisResource.FOREIGN_KEY);
        }
        given().get(health + "/ready").then().statusCode(200).body("status", equalTo("UP"));
        try (Jedis redis = ForeignLayoutRedisResource.jedis()) {
            assertThat(redis.get("baton:default:layout")).isEqualTo("2");
        }
        assertThat(Metrics.scrape(metrics.toString()).value("baton_layout_refused")).isZero();
        acquire("order-1", "a").then().statusCode(200).body("status", equalTo("ACQUIRED"));
    }
}
