package dev.baton.lock;

import static dev.baton.testing.Api.abort;
import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.request;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;

/** The test profile sets baton.max-attempts=3. */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class DeadLetterScenariosTest {

    /** Three attempts, each aborted with requeue by its holder: DEAD. */
    private static void killRequest(String lcid, String requestId) {
        String token = acquire(lcid, fields("requestId", requestId, "payload", Map.of("sku", "A1"))).then()
                .statusCode(200).extract().path("token");
        for (int attempt = 1; attempt <= 3; attempt++) {
            abort(lcid, fields("requestId", requestId, "token", token, "requeue", true, "reason", "stock service down"))
                    .then().statusCode(200);
            if (attempt < 3) {
                token = acquire(lcid, "rescuer-" + attempt).then().body("request.requestId", equalTo(requestId))
                        .extract().path("token");
            }
        }
        request(lcid, requestId).then().body("state", equalTo("DEAD"));
    }

    private static List<Map<String, Object>> deadLetters() {
        return client().queryParam("limit", 1000).get("/v1/dead-letters").then().statusCode(200)
                .extract().jsonPath().getList("items");
    }

    private static Map<String, Object> deadLetterOf(String lcid) {
        return deadLetters().stream().filter(d -> lcid.equals(d.get("lcid"))).findFirst().orElse(null);
    }

    @Test
    void given_a_request_that_used_up_its_attempts_when_listing_dead_letters_then_it_is_there_with_its_payload() {
        String lcid = unique("order");
        killRequest(lcid, "poison");

        Map<String, Object> letter = deadLetterOf(lcid);

        assertThat(letter).isNotNull()
                .containsEntry("requestId", "poison")
                .containsEntry("attempts", 3)
                .containsEntry("reason", "stock service down")
                .containsEntry("payload", Map.of("sku", "A1"));
        assertThat(letter.get("diedAt")).isNotNull();
    }

    @Test
    void given_a_dead_request_when_retried_then_it_is_queued_with_a_fresh_budget_and_leaves_the_dead_letters() {
        String lcid = unique("order");
        killRequest(lcid, "poison");
        // Drain the rescuers so the lock is free.
        String token = acquire(lcid, "drain").then().statusCode(200).extract().path("token");
        String current = acquire(lcid, "drain").then().extract().path("request.requestId");
        while (current != null) {
            current = complete(lcid, token, current).then().statusCode(200).extract().path("request.requestId");
        }

        client().post("/v1/locks/{lcid}/requests/{r}/retry", lcid, "poison").then().statusCode(202)
                .body("status", equalTo("QUEUED")).body("position", equalTo(1));

        request(lcid, "poison").then().body("state", equalTo("QUEUED")).body("attempt", equalTo(1));
        assertThat(deadLetterOf(lcid)).isNull();
        acquire(lcid, "next-caller").then().statusCode(200)
                .body("request.requestId", equalTo("poison"))
                .body("request.attempt", equalTo(1))
                .body("request.payload.sku", equalTo("A1"));
    }

    @Test
    void given_a_request_that_is_not_dead_when_retried_then_409_not_dead_and_unknown_is_404() {
        String lcid = unique("order");
        acquire(lcid, "alive").then().statusCode(200);

        client().post("/v1/locks/{lcid}/requests/{r}/retry", lcid, "alive").then().statusCode(409)
                .body("code", equalTo("NOT_DEAD")).body("state", equalTo("ACTIVE"));
        client().post("/v1/locks/{lcid}/requests/{r}/retry", lcid, "ghost").then().statusCode(404);
    }

    @Test
    void given_a_bad_limit_when_listing_then_400_naming_limit() {
        client().queryParam("limit", 0).get("/v1/dead-letters").then().statusCode(400).body("field", equalTo("limit"));
        client().queryParam("limit", "x").get("/v1/dead-letters").then().statusCode(400).body("field", equalTo("limit"));
    }
}
