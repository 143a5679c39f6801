package dev.baton.api;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.lock;
import static dev.baton.testing.Api.request;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.util.Map;
import java.util.stream.Stream;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.baton.redis.LockKeys;
import dev.baton.testing.RedisTestResource;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.restassured.response.ValidatableResponse;

/**
 * A body field that the operation does not define is a 400 naming it, and changes nothing: in a
 * lock service a dropped field ({@code leaseMS} for {@code leaseMs}, a {@code take} a server does
 * not know) would silently change the guarantees. The caller's own JSON (payload, result) is not
 * checked.
 */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class StrictBodiesTest {

    @Inject
    RedisDataSource redis;

    /** Operation, body with {TOKEN} for the holder's token, and the field the 400 must name. */
    static Stream<Arguments> unknownFields() {
        return Stream.of(
                Arguments.of("acquire", "{\"requestId\":\"newcomer\",\"leaseMS\":100}", "leaseMS"),
                Arguments.of("acquire", "{\"requestId\":\"newcomer\",\"mode\":\"wait\",\"waitMS\":1000}", "waitMS"),
                Arguments.of("heartbeat", "{\"token\":\"{TOKEN}\",\"leaseMs\":600000,\"lease\":1}", "lease"),
                Arguments.of("complete", "{\"token\":\"{TOKEN}\",\"requestId\":\"held\",\"tak\":2}", "tak"),
                Arguments.of("complete", "{\"token\":\"{TOKEN}\",\"requestId\":\"held\",\"results\":{\"ok\":true}}",
                        "results"),
                Arguments.of("complete", "{\"token\":\"{TOKEN}\",\"completed\":[{\"requestId\":\"held\",\"reslt\":1}]}",
                        "completed[0].reslt"),
                Arguments.of("abort", "{\"requestId\":\"held\",\"token\":\"{TOKEN}\",\"requeu\":true}", "requeu"),
                Arguments.of("abort", "{\"requestId\":\"waiting\",\"why\":\"gone\"}", "why"));
    }

    @ParameterizedTest(name = "{0} {1} -> 400 naming {2}")
    @MethodSource("unknownFields")
    void given_a_held_lock_with_a_waiter_when_a_call_carries_an_unknown_field_then_400_naming_it_and_nothing_changes(
            String operation, String body, String field) {
        refusedOnAHeldLockAndNothingChanges(operation, body, field)
                .body("detail", equalTo("unknown field '" + field + "'"));
    }

    /**
     * Given a lock held by "held" with "waiting" queued, sends the body ({TOKEN}: the holder's token)
     * to the operation, expects a 400 naming the field, and checks that nothing changed.
     */
    private static ValidatableResponse refusedOnAHeldLockAndNothingChanges(String operation, String body, String field) {
        String lcid = unique("strict");
        String token = acquire(lcid, "held").then().statusCode(200).extract().path("token");
        acquire(lcid, "waiting").then().statusCode(202);
        JsonPath before = lock(lcid);

        ValidatableResponse refused = client().body(body.replace("{TOKEN}", token))
                .post("/v1/locks/{lcid}/" + operation, lcid).then()
                .statusCode(400)
                .contentType("application/problem+json")
                .body("code", equalTo("INVALID_REQUEST"))
                .body("field", equalTo(field));

        JsonPath after = lock(lcid);
        assertThat(after.getString("activeRequestId")).isEqualTo("held");
        assertThat(after.getLong("fence")).isEqualTo(before.getLong("fence"));
        assertThat(after.getInt("queueLength")).isEqualTo(1);
        assertThat(after.getLong("leaseRemainingMs")).isLessThanOrEqualTo(30_000);
        request(lcid, "waiting").then().statusCode(200).body("state", equalTo("QUEUED"));
        request(lcid, "newcomer").then().statusCode(404);
        return refused;
    }

    @Test
    void given_a_fresh_lcid_when_an_acquire_carries_an_unknown_field_then_no_key_is_written() {
        String lcid = unique("strict");

        client().body(fields("requestId", "r", "leaseMS", 100)).post("/v1/locks/{lcid}/acquire", lcid).then()
                .statusCode(400).body("field", equalTo("leaseMS"));

        assertThat(redis.key().exists(LockKeys.of("default", lcid).asList().toArray(String[]::new))).isZero();
    }

    @Test
    void given_a_claim_with_an_unknown_field_then_400_naming_it() {
        client().body(fields("leaseMs", 1000, "lcidprefix", "order-")).post("/v1/claims").then().statusCode(400)
                .contentType("application/problem+json")
                .body("field", equalTo("lcidprefix"))
                .body("detail", equalTo("unknown field 'lcidprefix'"));
    }

    @Test
    void given_a_retry_which_takes_no_body_when_it_carries_a_field_then_400_and_without_one_it_is_answered() {
        String lcid = unique("strict");

        client().body(fields("force", true)).post("/v1/locks/{lcid}/requests/{id}/retry", lcid, "gone").then()
                .statusCode(400).contentType("application/problem+json").body("field", equalTo("force"));
        client().body("[1]").post("/v1/locks/{lcid}/requests/{id}/retry", lcid, "gone").then()
                .statusCode(400).body("field", equalTo("body"));
        client().body("{}").post("/v1/locks/{lcid}/requests/{id}/retry", lcid, "gone").then()
                .statusCode(404).body("code", equalTo("NOT_FOUND"));
        client().post("/v1/locks/{lcid}/requests/{id}/retry", lcid, "gone").then()
                .statusCode(404).body("code", equalTo("NOT_FOUND"));
    }

    @Test
    void given_a_payload_and_a_result_with_any_fields_then_they_are_kept_as_sent() {
        String lcid = unique("strict");
        Map<String, Object> own = Map.of("leaseMS", 1, "nested", Map.of("anything", true));
        String token = acquire(lcid, fields("requestId", "r", "payload", own)).then().statusCode(200)
                .extract().path("token");
        acquire(lcid, fields("requestId", "q", "payload", own)).then().statusCode(202);

        JsonPath next = client().body(fields("token", token, "requestId", "r", "result", own))
                .post("/v1/locks/{lcid}/complete", lcid).then().statusCode(200).extract().jsonPath();

        assertThat(next.getMap("request.payload")).isEqualTo(own);
        assertThat(request(lcid, "r").then().extract().jsonPath().getMap("result")).isEqualTo(own);
    }

    @Test
    void given_a_known_field_sent_as_null_then_it_counts_as_absent() {
        String lcid = unique("strict");

        client().body("{\"requestId\":\"r\",\"leaseMs\":null,\"mode\":null,\"take\":null}")
                .post("/v1/locks/{lcid}/acquire", lcid).then().statusCode(200)
                .body("status", equalTo("ACQUIRED")).body("leaseMs", equalTo(30000));
    }

    /** Operation, body with {TOKEN}, and the field the 400 must name: "" is no number, boolean or list. */
    static Stream<Arguments> emptyStrings() {
        return Stream.of(
                Arguments.of("acquire", "{\"requestId\":\"newcomer\",\"leaseMs\":\"\"}", "leaseMs"),
                Arguments.of("acquire", "{\"requestId\":\"newcomer\",\"take\":\"\"}", "take"),
                Arguments.of("acquire", "{\"requestId\":\"newcomer\",\"mode\":\"wait\",\"waitMs\":\"\"}", "waitMs"),
                Arguments.of("heartbeat", "{\"token\":\"{TOKEN}\",\"leaseMs\":\"\"}", "leaseMs"),
                Arguments.of("complete", "{\"token\":\"{TOKEN}\",\"requestId\":\"held\",\"take\":\"\"}", "take"),
                Arguments.of("complete", "{\"token\":\"{TOKEN}\",\"completed\":\"\"}", "completed"),
                Arguments.of("abort", "{\"requestId\":\"held\",\"token\":\"{TOKEN}\",\"requeue\":\"\"}", "requeue"));
    }

    @ParameterizedTest(name = "{0} {1} -> 400 naming {2}")
    @MethodSource("emptyStrings")
    void given_a_held_lock_when_a_number_or_boolean_field_is_an_empty_string_then_400_naming_it_and_nothing_changes(
            String operation, String body, String field) {
        refusedOnAHeldLockAndNothingChanges(operation, body, field);
    }

    @Test
    void given_a_claim_with_an_empty_string_for_a_number_then_400_naming_it() {
        client().body("{\"take\":\"\"}").post("/v1/claims").then().statusCode(400).body("field", equalTo("take"));
        client().body("{\"leaseMs\":\"\"}").post("/v1/claims").then().statusCode(400).body("field", equalTo("leaseMs"));
    }

    @Test
    void given_a_field_named_twice_then_400_naming_it_and_nothing_is_stored() {
        String lcid = unique("strict");

        client().body("{\"requestId\":\"a\",\"requestId\":\"b\"}").post("/v1/locks/{lcid}/acquire", lcid).then()
                .statusCode(400).contentType("application/problem+json")
                .body("code", equalTo("INVALID_REQUEST"))
                .body("field", equalTo("requestId"))
                .body("detail", equalTo("duplicate field 'requestId'"));
        client().body("{\"requestId\":\"a\",\"payload\":{\"x\":1,\"x\":2}}").post("/v1/locks/{lcid}/acquire", lcid)
                .then().statusCode(400).body("field", equalTo("payload.x"));

        assertThat(redis.key().exists(LockKeys.of("default", lcid).asList().toArray(String[]::new))).isZero();
    }
}
