package dev.baton.lock;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.lock;
import static dev.baton.testing.Api.request;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

@QuarkusTest
@WithTestResource(RedisTestResource.class)
class HandoffScenariosTest {

    @Test
    void given_a_holder_with_waiters_when_it_completes_then_it_keeps_the_lock_same_token_and_a_higher_fence() {
        String lcid = unique("order");
        JsonPath granted = acquire(lcid, "pay").then().statusCode(200).extract().jsonPath();
        acquire(lcid, fields("requestId", "stock", "payload", Map.of("sku", "A1"))).then().statusCode(202);

        JsonPath next = complete(lcid, granted.getString("token"), "pay").then().statusCode(200)
                .body("status", equalTo("NEXT"))
                .body("request.requestId", equalTo("stock"))
                .body("request.payload.sku", equalTo("A1"))
                .body("request.attempt", equalTo(1))
                .extract().jsonPath();

        assertThat(next.getString("token")).isEqualTo(granted.getString("token"));
        assertThat(next.getLong("fence")).isGreaterThan(granted.getLong("fence"));
        assertThat(lock(lcid).getBoolean("held")).isTrue();
        assertThat(lock(lcid).getString("activeRequestId")).isEqualTo("stock");
        request(lcid, "pay").then().statusCode(200).body("state", equalTo("DONE"));
        request(lcid, "stock").then().statusCode(200).body("state", equalTo("ACTIVE"));
    }

    @Test
    void given_five_queued_requests_when_the_holder_drains_them_then_they_run_in_arrival_order_with_rising_fences() {
        String lcid = unique("order");
        JsonPath r = acquire(lcid, "r0").then().statusCode(200).extract().jsonPath();
        for (int i = 1; i <= 5; i++) {
            acquire(lcid, "r" + i).then().statusCode(202);
        }

        List<String> order = new ArrayList<>();
        long lastFence = r.getLong("fence");
        String current = "r0";
        String token = r.getString("token");
        while (true) {
            JsonPath answer = complete(lcid, token, current).then().statusCode(200).extract().jsonPath();
            if (answer.getString("status").equals("RELEASED")) {
                break;
            }
            current = answer.getString("request.requestId");
            order.add(current);
            assertThat(answer.getLong("fence")).isGreaterThan(lastFence);
            lastFence = answer.getLong("fence");
        }

        assertThat(order).containsExactly("r1", "r2", "r3", "r4", "r5");
        assertThat(lock(lcid).getBoolean("held")).isFalse();
        assertThat(lock(lcid).getInt("queueLength")).isZero();
    }

    @Test
    void given_a_complete_that_handed_off_when_it_is_retried_then_the_same_next_comes_back_and_nothing_else_is_popped() {
        String lcid = unique("order");
        String token = acquire(lcid, "a").then().extract().path("token");
        acquire(lcid, "b").then().statusCode(202);
        acquire(lcid, "c").then().statusCode(202);

        Map<String, Object> first = complete(lcid, token, "a").then().statusCode(200).extract().jsonPath().getMap("$");
        Map<String, Object> retry = complete(lcid, token, "a").then().statusCode(200).extract().jsonPath().getMap("$");

        assertThat(retry).isEqualTo(first);
        assertThat(lock(lcid).getString("activeRequestId")).isEqualTo("b");
        assertThat(lock(lcid).getInt("queueLength")).isEqualTo(1);
        request(lcid, "c").then().body("state", equalTo("QUEUED")).body("position", equalTo(1));
    }

    @Test
    void given_a_complete_that_released_when_it_is_retried_then_released_again_and_a_newer_holder_is_untouched() {
        String lcid = unique("order");
        String token = acquire(lcid, "a").then().extract().path("token");
        complete(lcid, token, "a").then().statusCode(200).body("status", equalTo("RELEASED"));
        String other = acquire(lcid, "b").then().statusCode(200).extract().path("token");

        complete(lcid, token, "a").then().statusCode(200).body("status", equalTo("RELEASED"));

        assertThat(lock(lcid).getString("activeRequestId")).isEqualTo("b");
        complete(lcid, other, "b").then().statusCode(200).body("status", equalTo("RELEASED"));
    }

    @Test
    void given_a_completed_request_when_its_result_is_read_then_it_is_kept() {
        String lcid = unique("order");
        String token = acquire(lcid, "a").then().extract().path("token");
        complete(lcid, fields("token", token, "requestId", "a", "result", List.of(1, 2, 3))).then().statusCode(200);

        request(lcid, "a").then().statusCode(200)
                .body("state", equalTo("DONE"))
                .body("result", equalTo(List.of(1, 2, 3)))
                .body("attempt", equalTo(1));
    }

    @Test
    void given_a_held_lock_when_a_stranger_completes_then_409_lock_lost_and_nothing_changes() {
        String lcid = unique("order");
        acquire(lcid, "a").then().statusCode(200);
        acquire(lcid, "b").then().statusCode(202);

        complete(lcid, "not-the-token", "a").then().statusCode(409)
                .contentType("application/problem+json")
                .body("code", equalTo("LOCK_LOST"));

        assertThat(lock(lcid).getString("activeRequestId")).isEqualTo("a");
        assertThat(lock(lcid).getInt("queueLength")).isEqualTo(1);
    }

    @Test
    void given_the_holder_token_when_it_completes_a_request_it_does_not_hold_then_409_lock_lost() {
        String lcid = unique("order");
        String token = acquire(lcid, "a").then().extract().path("token");
        acquire(lcid, "b").then().statusCode(202);

        complete(lcid, token, "b").then().statusCode(409).body("code", equalTo("LOCK_LOST"));

        request(lcid, "b").then().body("state", equalTo("QUEUED"));
    }
}
