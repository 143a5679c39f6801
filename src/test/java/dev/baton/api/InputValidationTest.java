package dev.baton.api;

import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.containsString;

import java.util.stream.Stream;

import jakarta.inject.Inject;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import dev.baton.testing.RedisTestResource;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;

/** Bad input is a 400 problem naming the field, and leaves no trace in Redis. */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class InputValidationTest {

    @Inject
    RedisDataSource redis;

    static Stream<Arguments> badBodies() {
        return Stream.of(
                Arguments.of("acquire", "{}", "requestId"),
                Arguments.of("acquire", "{\"requestId\":\"\"}", "requestId"),
                Arguments.of("acquire", "{\"requestId\":\"has space\"}", "requestId"),
                Arguments.of("acquire", "{\"requestId\":\"" + "r".repeat(129) + "\"}", "requestId"),
                Arguments.of("acquire", "{\"requestId\":\"a/b\"}", "requestId"),
                Arguments.of("acquire", "{\"requestId\":7}", "requestId"),
                Arguments.of("acquire", "{\"requestId\":null}", "requestId"),
                Arguments.of("acquire", "{\"requestId\":\"ok\",\"leaseMs\":499}", "leaseMs"),
                Arguments.of("acquire", "{\"requestId\":\"ok\",\"leaseMs\":600001}", "leaseMs"),
                Arguments.of("acquire", "{\"requestId\":\"ok\",\"leaseMs\":-1}", "leaseMs"),
                Arguments.of("acquire", "{\"requestId\":\"ok\",\"leaseMs\":1000.5}", "leaseMs"),
                Arguments.of("acquire", "{\"requestId\":\"ok\",\"leaseMs\":\"1000\"}", "leaseMs"),
                Arguments.of("acquire", "{\"requestId\":\"ok\",\"leaseMs\":1e40}", "leaseMs"),
                Arguments.of("acquire", "{\"requestId\":\"ok\"", "body"),
                Arguments.of("acquire", "not json", "body"),
                Arguments.of("acquire", "[\"ok\"]", "body"),
                Arguments.of("acquire", "", "body"),
                Arguments.of("acquire", "{\"requestId\":\"ok\"} trailing", "body"),
                Arguments.of("heartbeat", "{}", "token"),
                Arguments.of("heartbeat", "{\"token\":\"t\",\"leaseMs\":10}", "leaseMs"),
                Arguments.of("complete", "{\"requestId\":\"ok\"}", "token"),
                Arguments.of("complete", "{\"token\":\"t\"}", "requestId"),
                Arguments.of("complete", "{\"token\":\"t t\",\"requestId\":\"ok\"}", "token"),
                Arguments.of("abort", "{}", "requestId"),
                Arguments.of("abort", "{\"requestId\":\"ok\",\"requeue\":\"yes\"}", "requeue"),
                Arguments.of("abort", "{\"requestId\":\"ok\",\"reason\":\"" + "z".repeat(1025) + "\"}", "reason"));
    }

    @ParameterizedTest(name = "{0} {1} -> 400 naming {2}")
    @MethodSource("badBodies")
    void given_a_bad_body_when_posted_then_400_invalid_request_naming_the_field_and_no_state(String operation,
            String body, String field) {
        String lcid = unique("order");

        client().body(body).post("/v1/locks/{lcid}/" + operation, lcid).then().statusCode(400)
                .contentType("application/problem+json")
                .body("code", equalTo("INVALID_REQUEST"))
                .body("status", equalTo(400))
                .body("field", equalTo(field))
                .body("detail", not(containsString("Exception")));

        assertThat(redis.key().exists(dev.baton.redis.LockKeys.of("default", lcid).asList().toArray(String[]::new))).isZero();
    }

    @ParameterizedTest(name = "lcid {0} -> 400")
    @MethodSource("badLcids")
    void given_a_bad_lcid_when_acquiring_then_400_naming_lcid(String lcid) {
        client().body("{\"requestId\":\"ok\"}").post("/v1/locks/{lcid}/acquire", lcid).then().statusCode(400)
                .body("code", equalTo("INVALID_REQUEST"))
                .body("field", equalTo("lcid"));
    }

    static Stream<String> badLcids() {
        return Stream.of("has space", "l".repeat(201), "semi;colon", "ünicode", "quote\"");
    }

    @Test
    void given_an_lcid_with_braces_that_would_break_the_hash_tag_when_acquiring_then_400() {
        client().urlEncodingEnabled(false).body("{\"requestId\":\"ok\"}")
                .post("/v1/locks/brace%7Bx%7D/acquire").then().statusCode(400)
                .body("field", equalTo("lcid"));
    }

    @Test
    void given_a_bad_request_id_in_the_path_when_viewing_then_400_naming_request_id() {
        client().get("/v1/locks/{lcid}/requests/{requestId}", "order", "bad id").then().statusCode(400)
                .body("field", equalTo("requestId"));
    }

    @Test
    void given_a_text_body_when_acquiring_then_415_problem() {
        io.restassured.RestAssured.given().contentType("text/plain").body("requestId=ok")
                .post("/v1/locks/{lcid}/acquire", unique("order")).then().statusCode(415)
                .contentType("application/problem+json")
                .body("code", equalTo("UNSUPPORTED_MEDIA_TYPE"));
    }

    @Test
    void given_an_unknown_path_or_method_then_404_and_405_problems() {
        io.restassured.RestAssured.given().get("/v1/nothing-here").then().statusCode(404)
                .contentType("application/problem+json").body("code", equalTo("NOT_FOUND"));
        io.restassured.RestAssured.given().delete("/v1/locks/order/acquire").then().statusCode(405)
                .contentType("application/problem+json").body("code", equalTo("METHOD_NOT_ALLOWED"));
    }
}
