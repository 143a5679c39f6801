package dev.baton.api;

import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.lock;
import static dev.baton.testing.Api.request;
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
import org.junit.jupiter.params.provider.ValueSource;
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
    void given_an_unknown_path_or_method_then_404_and_405_problems_and_405_says_what_is_allowed() {
        io.restassured.RestAssured.given().get("/v1/nothing-here").then().statusCode(404)
                .contentType("application/problem+json").body("code", equalTo("NOT_FOUND"));
        io.restassured.RestAssured.given().delete("/v1/locks/order/acquire").then().statusCode(405)
                .contentType("application/problem+json").body("code", equalTo("METHOD_NOT_ALLOWED"))
                .header("Allow", "POST");
        io.restassured.RestAssured.given().get("/v1/claims").then().statusCode(405).header("Allow", "POST");
        io.restassured.RestAssured.given().post("/v1/locks/order").then().statusCode(405).header("Allow", "GET, HEAD");
        io.restassured.RestAssured.given().delete("/v1/locks/order/requests/r1").then().statusCode(405)
                .header("Allow", "GET, HEAD");
        io.restassured.RestAssured.given().get("/v1/locks/order/requests/r1/retry").then().statusCode(405)
                .header("Allow", "POST");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"{L};x", "{L};", ";x"})
    void given_a_raw_semicolon_in_the_lcid_then_400_naming_lcid_and_nothing_is_locked(String segment) {
        String lcid = unique("order");
        client().body(fields("requestId", "semi")).post("/v1/locks/" + segment.replace("{L}", lcid) + "/acquire").then()
                .statusCode(400).contentType("application/problem+json")
                .body("code", equalTo("INVALID_REQUEST")).body("field", equalTo("lcid"));
        assertThat(lock(lcid).getBoolean("held")).isFalse();
        request(lcid, "semi").then().statusCode(404);
    }

    @Test
    void given_a_raw_semicolon_in_a_request_id_then_400_naming_request_id() {
        client().get("/v1/locks/order-1/requests/r1;v=2").then().statusCode(400)
                .body("code", equalTo("INVALID_REQUEST")).body("field", equalTo("requestId"));
    }

    /** RFC 8259: JSON exchanged between systems is UTF-8; Jackson would otherwise guess UTF-16 or UTF-32. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"UTF-16", "UTF-16BE", "UTF-16LE", "UTF-32", "UTF-32LE"})
    void given_a_body_in_another_encoding_than_utf8_then_400_naming_body_and_nothing_stored(String charset) {
        String lcid = unique("order");
        byte[] body = "{\"requestId\":\"enc\"}".getBytes(java.nio.charset.Charset.forName(charset));
        client().body(body).post("/v1/locks/{lcid}/acquire", lcid).then()
                .statusCode(400).contentType("application/problem+json")
                .body("code", equalTo("INVALID_REQUEST")).body("field", equalTo("body"))
                .body("detail", equalTo("the body must be JSON encoded as UTF-8"));
        request(lcid, "enc").then().statusCode(404);
    }

    @Test
    void given_a_body_with_nul_bytes_then_400_and_a_utf8_byte_order_mark_is_accepted() {
        String lcid = unique("order");
        client().body(new byte[] {0, 0, 0, '{', '}'}).post("/v1/locks/{lcid}/acquire", lcid).then()
                .statusCode(400).body("field", equalTo("body"));
        byte[] json = "{\"requestId\":\"bom\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] withBom = new byte[json.length + 3];
        withBom[0] = (byte) 0xEF;
        withBom[1] = (byte) 0xBB;
        withBom[2] = (byte) 0xBF;
        System.arraycopy(json, 0, withBom, 3, json.length);
        client().body(withBom).post("/v1/locks/{lcid}/acquire", lcid).then().statusCode(200)
                .body("requestId", equalTo("bom"));
    }
}
