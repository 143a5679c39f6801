package dev.baton.lock;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.heartbeat;
import static dev.baton.testing.Api.lock;
import static dev.baton.testing.Api.request;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

import dev.baton.testing.ClaimWorker;
import dev.baton.testing.RedisTestResource;
import dev.baton.testing.ShortPickupProfile;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;

/**
 * Protocol v1.1 request modes: a {@code wait} request keeps its place in the FIFO queue and is
 * never handed to another holder; at the head, with the lock free of its predecessor, the lock
 * is granted to it (its turn), and its submitter picks the turn up by repeating its acquire.
 */
@QuarkusTest
@TestProfile(ShortPickupProfile.class)
@WithTestResource(RedisTestResource.class)
class WaitModeScenariosTest {

    private static JsonPath waitFor(String lcid, String requestId, long leaseMs) {
        return acquire(lcid, fields("requestId", requestId, "mode", "wait", "leaseMs", leaseMs)).then()
                .extract().jsonPath();
    }

    @Test
    void given_a_wait_request_behind_a_holder_when_the_holder_completes_then_the_lock_is_passed_to_it_and_its_repeat_picks_it_up() {
        String lcid = unique("order");
        JsonPath holder = acquire(lcid, "pay-1").then().statusCode(200).extract().jsonPath();
        acquire(lcid, fields("requestId", "stock-1", "mode", "wait", "leaseMs", 20000)).then().statusCode(202)
                .body("position", equalTo(1));

        complete(lcid, holder.getString("token"), "pay-1").then().statusCode(200)
                .body("status", equalTo("RELEASED")).body("pending", equalTo(0)).body("passedTo", equalTo("stock-1"));

        assertThat(lock(lcid).getBoolean("held")).isTrue();
        assertThat(lock(lcid).getString("activeRequestId")).isEqualTo("stock-1");
        JsonPath turn = acquire(lcid, fields("requestId", "stock-1", "mode", "wait", "leaseMs", 20000)).then()
                .statusCode(200).body("status", equalTo("ACQUIRED")).body("requestId", equalTo("stock-1"))
                .body("leaseMs", equalTo(20000)).extract().jsonPath();
        assertThat(turn.getString("token")).isNotEqualTo(holder.getString("token"));
        assertThat(turn.getLong("fence")).isGreaterThan(holder.getLong("fence"));
        assertThat(Duration.between(Instant.now(), Instant.parse(turn.getString("expiresAt"))).toMillis())
                .isBetween(15_000L, 21_000L);
        acquire(lcid, "stock-1").then().statusCode(200).body("token", equalTo(turn.getString("token")))
                .body("fence", equalTo(turn.getLong("fence")));

        complete(lcid, turn.getString("token"), "stock-1").then().body("status", equalTo("RELEASED"))
                .body("passedTo", nullValue());
        assertThat(lock(lcid).getBoolean("held")).isFalse();
    }

    @Test
    void given_handoff_wait_handoff_queued_when_the_holders_complete_then_next_then_the_turn_then_a_claim_gets_the_last() {
        String lcid = unique("order");
        String token = acquire(lcid, "h1").then().statusCode(200).extract().path("token");
        acquire(lcid, "h2").then().statusCode(202);
        waitFor(lcid, "w", 30000);
        acquire(lcid, "h3").then().statusCode(202);

        complete(lcid, token, "h1").then().body("status", equalTo("NEXT")).body("request.requestId", equalTo("h2"));
        complete(lcid, token, "h2").then().body("status", equalTo("RELEASED")).body("pending", equalTo(1))
                .body("passedTo", equalTo("w"));
        String waiter = waitFor(lcid, "w", 30000).getString("token");
        complete(lcid, waiter, "w").then().body("status", equalTo("RELEASED")).body("pending", equalTo(1))
                .body("passedTo", nullValue());

        JsonPath claimed = ClaimWorker.claimOf(lcid);
        assertThat(claimed.getString("request.requestId")).isEqualTo("h3");
        complete(lcid, claimed.getString("token"), "h3").then().body("status", equalTo("RELEASED"));
    }

    @Test
    void given_a_wait_holder_with_a_handoff_request_behind_it_when_it_completes_with_take_then_it_is_handed_that_request() {
        String lcid = unique("order");
        String token = waitFor(lcid, "w", 30000).getString("token");
        acquire(lcid, "h").then().statusCode(202);

        complete(lcid, fields("token", token, "requestId", "w", "take", 1)).then().statusCode(200)
                .body("status", equalTo("NEXT")).body("token", equalTo(token)).body("request.requestId", equalTo("h"));
        // A retry of that complete answers the same, and pops nothing more.
        complete(lcid, fields("token", token, "requestId", "w", "take", 1)).then()
                .body("request.requestId", equalTo("h"));
    }

    @Test
    void given_a_turn_nobody_picks_up_when_the_pickup_window_ends_then_it_is_aborted_and_the_next_waiter_gets_the_lock()
            throws InterruptedException {
        String lcid = unique("order");
        String token = acquire(lcid, "h").then().statusCode(200).extract().path("token");
        waitFor(lcid, "gone", 30000);
        waitFor(lcid, "next", 30000);
        complete(lcid, token, "h").then().body("passedTo", equalTo("gone"));

        acquire(lcid, "next").then().statusCode(202).body("position", equalTo(1));
        Thread.sleep(ShortPickupProfile.PICKUP_MS + 300);

        acquire(lcid, "next").then().statusCode(200).body("status", equalTo("ACQUIRED"))
                .body("requestId", equalTo("next"));
        request(lcid, "gone").then().statusCode(200).body("state", equalTo("ABORTED"))
                .body("reason", equalTo("PICKUP_TIMEOUT"));
    }

    @Test
    void given_a_turn_nobody_picks_up_with_handoff_work_behind_it_then_a_claim_gets_that_work_after_the_window()
            throws InterruptedException {
        String lcid = unique("order");
        String token = acquire(lcid, "h").then().statusCode(200).extract().path("token");
        waitFor(lcid, "gone", 30000);
        acquire(lcid, "h2").then().statusCode(202);
        complete(lcid, token, "h").then().body("passedTo", equalTo("gone"));
        Thread.sleep(ShortPickupProfile.PICKUP_MS + 300);

        assertThat(ClaimWorker.drainForOneSecond(lcid)).containsExactly(lcid + "/h2#1");
        request(lcid, "gone").then().body("state", equalTo("ABORTED")).body("reason", equalTo("PICKUP_TIMEOUT"));
    }

    @Test
    void given_an_orphaned_queue_with_a_wait_request_at_the_head_when_workers_claim_then_it_is_never_handed_out_but_gets_its_turn()
            throws InterruptedException {
        String lcid = unique("order");
        String token = acquire(lcid, fields("requestId", "dies", "leaseMs", 600_000)).then().statusCode(200)
                .extract().path("token");
        waitFor(lcid, "w", 30000);
        heartbeat(lcid, fields("token", token, "leaseMs", 500)).then().statusCode(200);
        Thread.sleep(700); // the holder died; "dies" goes back to the head when somebody looks

        assertThat(ClaimWorker.claimUntil(lcid, () -> "w".equals(lock(lcid).getString("activeRequestId"))))
                .containsExactly(lcid + "/dies#2");
        waitFor(lcid, "w", 30000);
        acquire(lcid, "w").then().statusCode(200).body("status", equalTo("ACQUIRED"));
    }

    @Test
    void given_a_wait_holder_that_died_when_workers_claim_then_its_request_is_never_handed_out_but_gets_its_turn_again()
            throws InterruptedException {
        String lcid = unique("order");
        JsonPath first = waitFor(lcid, "w", 600_000);
        acquire(lcid, "h").then().statusCode(202);
        heartbeat(lcid, fields("token", first.getString("token"), "leaseMs", 500)).then().statusCode(200);
        Thread.sleep(700); // its submitter died; nobody acquires this lcid again

        assertThat(ClaimWorker.claimUntil(lcid, () -> "w".equals(lock(lcid).getString("activeRequestId"))))
                .as("claims never hand out h while w, a wait request, is ahead of it").isEmpty();
        JsonPath again = waitFor(lcid, "w", 600_000);
        assertThat(again.getString("status")).isEqualTo("ACQUIRED");
        assertThat(again.getString("token")).isNotEqualTo(first.getString("token"));
        request(lcid, "w").then().body("state", equalTo("ACTIVE")).body("attempt", equalTo(2));
    }

    @Test
    void given_an_orphaned_queue_of_handoff_requests_when_a_wait_request_arrives_then_it_queues_and_a_handoff_acquire_rescues()
            throws InterruptedException {
        String lcid = unique("order");
        String token = acquire(lcid, fields("requestId", "dies", "leaseMs", 600_000)).then().statusCode(200)
                .extract().path("token");
        acquire(lcid, "h2").then().statusCode(202);
        heartbeat(lcid, fields("token", token, "leaseMs", 500)).then().statusCode(200);
        Thread.sleep(700);

        acquire(lcid, fields("requestId", "w", "mode", "wait")).then().statusCode(202).body("position", equalTo(3));
        acquire(lcid, "h3").then().statusCode(200).body("status", equalTo("NEXT"))
                .body("request.requestId", equalTo("dies")).body("request.attempt", equalTo(2));
    }

    @Test
    void given_a_queued_wait_request_when_it_is_repeated_as_handoff_then_the_stored_mode_counts() {
        String lcid = unique("order");
        String token = acquire(lcid, "h").then().statusCode(200).extract().path("token");
        waitFor(lcid, "w", 30000);
        acquire(lcid, fields("requestId", "w", "mode", "handoff")).then().statusCode(202);

        complete(lcid, token, "h").then().body("status", equalTo("RELEASED")).body("passedTo", equalTo("w"));
    }

    @Test
    void given_bad_mode_or_take_then_400_naming_the_field_and_nothing_is_stored() {
        String lcid = unique("order");
        acquire(lcid, fields("requestId", "r", "mode", "sometimes")).then().statusCode(400)
                .body("code", equalTo("INVALID_REQUEST")).body("field", equalTo("mode"));
        acquire(lcid, fields("requestId", "r", "mode", 1)).then().statusCode(400).body("field", equalTo("mode"));
        request(lcid, "r").then().statusCode(404);

        String token = acquire(lcid, "r").then().statusCode(200).extract().path("token");
        complete(lcid, fields("token", token, "requestId", "r", "take", 101)).then().statusCode(400)
                .body("field", equalTo("take"));
        complete(lcid, fields("token", token, "requestId", "r", "take", "one")).then().statusCode(400)
                .body("field", equalTo("take"));
        request(lcid, "r").then().body("state", equalTo("ACTIVE"));
    }
}
