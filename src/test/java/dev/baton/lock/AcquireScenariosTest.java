package dev.baton.lock;

import static dev.baton.testing.Api.abort;
import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.lock;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.notNullValue;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

@QuarkusTest
@WithTestResource(RedisTestResource.class)
class AcquireScenariosTest {

    @Test
    void given_a_free_lock_when_acquiring_then_the_caller_holds_it_with_token_fence_and_lease() {
        String lcid = unique("order");
        Instant before = Instant.now();

        JsonPath granted = acquire(lcid, fields("requestId", "pay-1", "leaseMs", 5000))
                .then().statusCode(200)
                .body("status", equalTo("ACQUIRED"))
                .body("requestId", equalTo("pay-1"))
                .body("leaseMs", equalTo(5000))
                .body("token", notNullValue())
                .extract().jsonPath();

        assertThat(granted.getString("token")).hasSizeGreaterThanOrEqualTo(22); // >= 128 bits base64url
        assertThat(granted.getLong("fence")).isPositive();
        Instant expiresAt = Instant.parse(granted.getString("expiresAt"));
        assertThat(expiresAt).isBetween(before.plusMillis(4000), before.plusMillis(7000));
        JsonPath view = lock(lcid);
        assertThat(view.getBoolean("held")).isTrue();
        assertThat(view.getString("activeRequestId")).isEqualTo("pay-1");
        assertThat(view.getMap("$")).doesNotContainKey("token");
    }

    @Test
    void given_no_lease_when_acquiring_then_the_default_lease_applies() {
        acquire(unique("order"), "pay-1").then().statusCode(200).body("leaseMs", equalTo(30000));
    }

    @Test
    void given_a_held_lock_when_others_acquire_then_they_are_queued_in_arrival_order_and_none_holds_it() {
        String lcid = unique("order");
        acquire(lcid, "first").then().statusCode(200);

        for (int i = 1; i <= 3; i++) {
            acquire(lcid, "waiter-" + i).then().statusCode(202)
                    .body("status", equalTo("QUEUED"))
                    .body("requestId", equalTo("waiter-" + i))
                    .body("position", equalTo(i))
                    .body("queueLength", equalTo(i));
        }
        assertThat(lock(lcid).getString("activeRequestId")).isEqualTo("first");
        assertThat(lock(lcid).getInt("queueLength")).isEqualTo(3);
    }

    @Test
    void given_a_granted_acquire_when_it_is_replayed_then_the_same_grant_comes_back_and_nothing_is_queued() {
        String lcid = unique("order");
        Map<String, Object> first = acquire(lcid, "pay-1").then().statusCode(200).extract().jsonPath().getMap("$");

        Map<String, Object> replay = acquire(lcid, "pay-1").then().statusCode(200).extract().jsonPath().getMap("$");

        assertThat(replay).isEqualTo(first);
        assertThat(lock(lcid).getInt("queueLength")).isZero();
    }

    @Test
    void given_a_queued_request_when_its_acquire_is_replayed_then_it_keeps_its_place_and_no_copy_is_queued() {
        String lcid = unique("order");
        acquire(lcid, "holder").then().statusCode(200);
        acquire(lcid, "a").then().statusCode(202);
        acquire(lcid, "b").then().statusCode(202);

        acquire(lcid, "a").then().statusCode(202).body("position", equalTo(1)).body("queueLength", equalTo(2));
        acquire(lcid, "b").then().statusCode(202).body("position", equalTo(2)).body("queueLength", equalTo(2));
    }

    @Test
    void given_a_done_request_when_it_is_acquired_again_then_409_duplicate_with_its_state_and_result() {
        String lcid = unique("order");
        String token = acquire(lcid, "pay-1").then().extract().path("token");
        complete(lcid, fields("token", token, "requestId", "pay-1", "result", Map.of("charged", 42)))
                .then().statusCode(200).body("status", equalTo("RELEASED"));

        acquire(lcid, "pay-1").then().statusCode(409)
                .contentType("application/problem+json")
                .body("code", equalTo("DUPLICATE_REQUEST"))
                .body("state", equalTo("DONE"))
                .body("result.charged", equalTo(42));
        assertThat(lock(lcid).getBoolean("held")).isFalse();
    }

    @Test
    void given_a_request_handed_to_another_holder_when_its_submitter_acquires_again_then_409_duplicate_active() {
        String lcid = unique("order");
        String token = acquire(lcid, "holder").then().extract().path("token");
        acquire(lcid, "mine").then().statusCode(202);
        complete(lcid, token, "holder").then().statusCode(200).body("request.requestId", equalTo("mine"));

        acquire(lcid, "mine").then().statusCode(409)
                .body("code", equalTo("DUPLICATE_REQUEST"))
                .body("state", equalTo("ACTIVE"));
    }

    @Test
    void given_waiting_requests_and_no_holder_when_a_new_caller_acquires_then_it_gets_the_oldest_request_as_next() {
        String lcid = unique("order");
        String token = acquire(lcid, "holder").then().extract().path("token");
        acquire(lcid, "old-1").then().statusCode(202);
        acquire(lcid, "old-2").then().statusCode(202);
        abort(lcid, fields("requestId", "holder", "token", token)).then().statusCode(200).body("pending", equalTo(2));
        assertThat(lock(lcid).getBoolean("held")).isFalse();

        JsonPath next = acquire(lcid, fields("requestId", "newcomer", "payload", Map.of("n", 1)))
                .then().statusCode(200)
                .body("status", equalTo("NEXT"))
                .body("request.requestId", equalTo("old-1"))
                .body("request.attempt", equalTo(1))
                .extract().jsonPath();

        // The newcomer joined the tail: FIFO is kept, and this holder drains all of it.
        String t = next.getString("token");
        complete(lcid, t, "old-1").then().body("request.requestId", equalTo("old-2"));
        complete(lcid, t, "old-2").then().body("request.requestId", equalTo("newcomer"))
                .body("request.payload.n", equalTo(1));
        complete(lcid, t, "newcomer").then().body("status", equalTo("RELEASED"));
    }

    @Test
    void given_my_request_waits_behind_no_holder_when_i_come_back_then_i_rescue_the_queue_from_its_head() {
        String lcid = unique("order");
        String token = acquire(lcid, "holder").then().extract().path("token");
        acquire(lcid, "a").then().statusCode(202);
        acquire(lcid, "mine").then().statusCode(202);
        abort(lcid, fields("requestId", "holder", "token", token)).then().statusCode(200);

        String t = acquire(lcid, "mine").then().statusCode(200)
                .body("status", equalTo("NEXT"))
                .body("request.requestId", equalTo("a"))
                .extract().path("token");

        assertThat(lock(lcid).getInt("queueLength")).isEqualTo(1); // "mine" kept its place, no copy
        complete(lcid, t, "a").then().body("request.requestId", equalTo("mine"));
    }

    @Test
    void given_a_payload_when_the_request_is_handed_off_then_the_payload_arrives_unchanged() {
        String lcid = unique("order");
        String token = acquire(lcid, "holder").then().extract().path("token");
        Map<String, Object> payload = Map.of("line", 3, "qty", 2.5, "tags", java.util.List.of("a", "é"), "nested",
                Map.of("ok", true));
        acquire(lcid, fields("requestId", "change", "payload", payload)).then().statusCode(202);

        Map<String, Object> got = complete(lcid, token, "holder").then().statusCode(200)
                .extract().jsonPath().getMap("request.payload");

        assertThat(got).containsEntry("line", 3).containsEntry("tags", java.util.List.of("a", "é"))
                .containsEntry("nested", Map.of("ok", true));
        assertThat(((Number) got.get("qty")).doubleValue()).isEqualTo(2.5);
    }

    @Test
    void given_a_lease_when_the_grant_is_read_then_expiresAt_is_rfc3339_utc() {
        String expiresAt = acquire(unique("order"), "x").then().extract().path("expiresAt");
        assertThat(expiresAt).endsWith("Z");
        assertThat(Duration.between(Instant.now(), Instant.parse(expiresAt)).toSeconds()).isBetween(25L, 31L);
    }
}
