package dev.baton.lock;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.request;
import static dev.baton.testing.Api.unique;
import static dev.baton.testing.LongPoll.untilQueued;
import static dev.baton.testing.LongPoll.waitForTurn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.net.URL;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.baton.testing.LongPoll.Pending;
import dev.baton.testing.Metrics;
import dev.baton.testing.RedisAdmin;
import dev.baton.testing.RedisTestResource;
import dev.baton.testing.ShortPickupProfile;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;

/**
 * Long-polls when things go wrong: a waiter that walked away, notifications lost with the
 * subscription. Waiters are re-checked every 500 ms and turns not picked up end after 1500 ms
 * in this profile.
 */
@QuarkusTest
@TestProfile(ShortPickupProfile.class)
@WithTestResource(RedisTestResource.class)
class LongPollRecoveryTest {

    @TestHTTPResource(value = "/metrics", management = true)
    URL metricsUrl;

    @Test
    void given_a_waiter_that_went_away_when_its_turn_is_not_picked_up_then_it_ends_pickup_timeout_and_the_next_waiter_gets_the_lock()
            throws Exception {
        String lcid = unique("order");
        Metrics before = Metrics.scrape(metricsUrl.toString());
        String token = acquire(lcid, "h").then().statusCode(200).extract().path("token");
        acquire(lcid, fields("requestId", "gone", "mode", "wait")).then().statusCode(202); // and walks away
        Pending next = waitForTurn(lcid, "next", 20_000);
        untilQueued(lcid, "next");
        long passed = System.nanoTime();
        complete(lcid, token, "h").then().body("passedTo", equalTo("gone"));

        Response turn = next.get();
        assertThat(turn.statusCode()).isEqualTo(200);
        assertThat(turn.jsonPath().getString("requestId")).isEqualTo("next");
        // After the pick-up window (1500 ms), within one re-check (500 ms) of the waiter.
        assertThat(next.millisAfter(passed)).isBetween((long) ShortPickupProfile.PICKUP_MS, 3500L);
        request(lcid, "gone").then().body("state", equalTo("ABORTED")).body("reason", equalTo("PICKUP_TIMEOUT"));
        assertThat(Metrics.scrape(metricsUrl.toString()).delta(before, "baton_pickup_timeouts_total")).isGreaterThanOrEqualTo(1);
    }

    @Test
    void given_waiters_when_the_subscription_connection_is_killed_then_every_waiter_still_gets_its_turn_within_the_recheck()
            throws Exception {
        List<String> lcids = new ArrayList<>();
        List<String> tokens = new ArrayList<>();
        List<Pending> waiters = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String lcid = unique("order");
            lcids.add(lcid);
            tokens.add(acquire(lcid, "h").then().statusCode(200).extract().path("token"));
            waiters.add(waitForTurn(lcid, "w", 20_000));
            untilQueued(lcid, "w");
        }

        assertThat(RedisAdmin.killPubSubClients()).isGreaterThanOrEqualTo(1);
        long passed = System.nanoTime();
        for (int i = 0; i < lcids.size(); i++) {
            complete(lcids.get(i), tokens.get(i), "h").then().body("passedTo", equalTo("w"));
        }

        for (Pending waiter : waiters) {
            assertThat(waiter.get().statusCode()).isEqualTo(200);
            assertThat(waiter.millisAfter(passed)).as("within the re-check interval (500 ms) and some slack")
                    .isLessThan(2000);
        }
        // And the subscription is back, for the notifications to come.
        for (int i = 0; i < 100 && RedisAdmin.pubSubClients() == 0; i++) {
            Thread.sleep(20);
        }
        assertThat(RedisAdmin.pubSubClients()).isGreaterThanOrEqualTo(1);
    }
}
