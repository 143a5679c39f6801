package dev.baton.lock;

import static dev.baton.testing.Api.abort;
import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.lock;
import static dev.baton.testing.Api.request;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;

/** The test profile sets baton.max-attempts=3. */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class AbortScenariosTest {

    @Test
    void given_a_holder_when_it_aborts_then_its_request_is_aborted_and_the_lock_released_with_pending_count() {
        String lcid = unique("order");
        String token = acquire(lcid, "a").then().extract().path("token");
        acquire(lcid, "b").then().statusCode(202);

        abort(lcid, fields("requestId", "a", "token", token, "reason", "payment declined")).then().statusCode(200)
                .body("status", equalTo("RELEASED"))
                .body("pending", equalTo(1));

        request(lcid, "a").then().body("state", equalTo("ABORTED")).body("reason", equalTo("payment declined"));
        assertThat(lock(lcid).getBoolean("held")).isFalse();
        assertThat(lock(lcid).getInt("queueLength")).isEqualTo(1);
    }

    @Test
    void given_a_holder_when_it_aborts_with_requeue_then_the_request_returns_to_the_head_with_attempt_plus_one() {
        String lcid = unique("order");
        String token = acquire(lcid, fields("requestId", "a", "payload", Map.of("x", 1))).then().extract().path("token");
        acquire(lcid, "b").then().statusCode(202);

        abort(lcid, fields("requestId", "a", "token", token, "requeue", true)).then().statusCode(200)
                .body("pending", equalTo(2));

        request(lcid, "a").then().body("state", equalTo("QUEUED")).body("position", equalTo(1))
                .body("attempt", equalTo(2));
        acquire(lcid, "c").then().statusCode(200)
                .body("request.requestId", equalTo("a"))
                .body("request.attempt", equalTo(2))
                .body("request.payload.x", equalTo(1));
    }

    @Test
    void given_a_request_requeued_max_attempts_times_when_aborted_again_then_it_is_dead() {
        String lcid = unique("order");
        String token = acquire(lcid, "a").then().extract().path("token");
        for (int attempt = 1; attempt <= 3; attempt++) {
            abort(lcid, fields("requestId", "a", "token", token, "requeue", true)).then().statusCode(200);
            if (attempt < 3) {
                token = acquire(lcid, "rescuer-" + attempt).then().statusCode(200)
                        .body("request.requestId", equalTo("a"))
                        .body("request.attempt", equalTo(attempt + 1))
                        .extract().path("token");
            }
        }

        request(lcid, "a").then().body("state", equalTo("DEAD")).body("attempt", equalTo(3));
    }

    @Test
    void given_a_holder_abort_when_it_is_retried_then_the_same_answer_and_nothing_changes() {
        String lcid = unique("order");
        String token = acquire(lcid, "a").then().extract().path("token");
        acquire(lcid, "b").then().statusCode(202);
        abort(lcid, fields("requestId", "a", "token", token, "requeue", true)).then().statusCode(200)
                .body("pending", equalTo(2));
        String newToken = acquire(lcid, "c").then().statusCode(200).extract().path("token");

        abort(lcid, fields("requestId", "a", "token", token, "requeue", true)).then().statusCode(200)
                .body("status", equalTo("RELEASED")).body("pending", equalTo(2));

        assertThat(lock(lcid).getBoolean("held")).isTrue();
        request(lcid, "a").then().body("state", equalTo("ACTIVE")).body("attempt", equalTo(2));
        complete(lcid, newToken, "a").then().statusCode(200).body("request.requestId", equalTo("b"));
    }

    @Test
    void given_a_queued_request_when_its_waiter_withdraws_then_it_is_aborted_and_leaves_the_queue() {
        String lcid = unique("order");
        String token = acquire(lcid, "holder").then().extract().path("token");
        acquire(lcid, "a").then().statusCode(202);
        acquire(lcid, "b").then().statusCode(202);

        abort(lcid, fields("requestId", "a")).then().statusCode(200).body("status", equalTo("RELEASED"));
        abort(lcid, fields("requestId", "a")).then().statusCode(200).body("status", equalTo("RELEASED"));

        request(lcid, "a").then().body("state", equalTo("ABORTED"));
        request(lcid, "b").then().body("position", equalTo(1));
        complete(lcid, token, "holder").then().body("request.requestId", equalTo("b"));
    }

    @Test
    void given_an_active_request_when_a_waiter_tries_to_withdraw_it_then_409_not_queued_with_its_state() {
        String lcid = unique("order");
        acquire(lcid, "a").then().statusCode(200);

        abort(lcid, fields("requestId", "a")).then().statusCode(409)
                .contentType("application/problem+json")
                .body("code", equalTo("NOT_QUEUED"))
                .body("state", equalTo("ACTIVE"));
        assertThat(lock(lcid).getBoolean("held")).isTrue();
    }

    @Test
    void given_an_unknown_request_when_withdrawn_then_404() {
        abort(unique("order"), fields("requestId", "ghost")).then().statusCode(404).body("code", equalTo("NOT_FOUND"));
    }

    @Test
    void given_a_stale_token_when_aborting_then_409_lock_lost() {
        String lcid = unique("order");
        acquire(lcid, "a").then().statusCode(200);

        abort(lcid, fields("requestId", "a", "token", "stale")).then().statusCode(409).body("code", equalTo("LOCK_LOST"));
        assertThat(lock(lcid).getString("activeRequestId")).isEqualTo("a");
    }
}
