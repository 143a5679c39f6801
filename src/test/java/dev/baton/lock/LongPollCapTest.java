package dev.baton.lock;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.unique;
import static dev.baton.testing.LongPoll.untilQueued;
import static dev.baton.testing.LongPoll.waitForTurn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.net.URL;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.baton.testing.LongPoll.Pending;
import dev.baton.testing.Metrics;
import dev.baton.testing.RedisTestResource;
import dev.baton.testing.TwoLongPollsProfile;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/** baton.wait.max-waiters = 2: the replica holds two long-polls; further calls are answered at once. */
@QuarkusTest
@TestProfile(TwoLongPollsProfile.class)
@WithTestResource(RedisTestResource.class)
class LongPollCapTest {

    @TestHTTPResource(value = "/metrics", management = true)
    URL metricsUrl;

    @Test
    void given_two_open_long_polls_when_more_calls_ask_to_wait_then_they_are_answered_at_once() throws Exception {
        String lcid = unique("order");
        String token = acquire(lcid, "h").then().statusCode(200).extract().path("token");
        Pending first = waitForTurn(lcid, "w1", 20_000);
        untilQueued(lcid, "w1");
        Pending second = waitForTurn(lcid, "w2", 20_000);
        untilQueued(lcid, "w2");
        Thread.sleep(100);
        assertThat(Metrics.scrape(metricsUrl.toString()).value("baton_longpolls_open")).isEqualTo(2.0);

        long start = System.nanoTime();
        acquire(lcid, fields("requestId", "w3", "mode", "wait", "waitMs", 20_000)).then().statusCode(202)
                .body("position", equalTo(3));
        client().queryParam("waitMs", 20_000).get("/v1/locks/{lcid}/requests/{requestId}", lcid, "w3").then()
                .statusCode(200).body("state", equalTo("QUEUED"));
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2000);
        assertThat(first.answered()).isFalse();
        assertThat(second.answered()).isFalse();

        complete(lcid, token, "h").then().body("passedTo", equalTo("w1"));
        assertThat(first.get().statusCode()).isEqualTo(200);
        complete(lcid, first.get().jsonPath().getString("token"), "w1").then().body("passedTo", equalTo("w2"));
        assertThat(second.get().statusCode()).isEqualTo(200);
    }
}
