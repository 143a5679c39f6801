package dev.baton.security;

import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.unique;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;

import java.net.URL;

import org.junit.jupiter.api.Test;

import dev.baton.testing.AuthEnabledProfile;
import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

@QuarkusTest
@TestProfile(AuthEnabledProfile.class)
@WithTestResource(RedisTestResource.class)
class AuthenticationTest {

    // Management URLs are relative to its root path, /q.
    @TestHTTPResource(value = "/health", management = true)
    URL health;

    @Test
    void given_no_key_when_calling_the_api_then_401_problem_with_a_bearer_challenge() {
        client().body(fields("requestId", "a")).post("/v1/locks/{lcid}/acquire", unique("order")).then()
                .statusCode(401)
                .contentType("application/problem+json")
                .header("WWW-Authenticate", BearerAuthMechanism.CHALLENGE)
                .body("code", equalTo("UNAUTHORIZED"));
        client().get("/v1/locks/{lcid}", "order").then().statusCode(401).body("code", equalTo("UNAUTHORIZED"));
        client().post("/v1/claims").then().statusCode(401);
    }

    @Test
    void given_an_unknown_or_malformed_key_then_401_problem() {
        client().auth().oauth2("not-a-key").body(fields("requestId", "a"))
                .post("/v1/locks/{lcid}/acquire", unique("order")).then()
                .statusCode(401).contentType("application/problem+json").body("code", equalTo("UNAUTHORIZED"));
        client().header("Authorization", "Basic dXNlcjpwYXNz").get("/v1/locks/{lcid}", "order").then()
                .statusCode(401).contentType("application/problem+json")
                .body("detail", equalTo("expected Authorization: Bearer <token>"));
    }

    @Test
    void given_two_authorization_headers_then_401_whichever_comes_first() {
        String lcid = unique("order");
        // AuthEnabledProfile.s team-a key, next to one that is not valid, in both orders.
        client().header("Authorization", "Bearer " + AuthEnabledProfile.KEY_A)
                .header("Authorization", "Bearer not-a-key").body(fields("requestId", "a"))
                .post("/v1/locks/{lcid}/acquire", lcid).then()
                .statusCode(401).contentType("application/problem+json")
                .header("WWW-Authenticate", BearerAuthMechanism.CHALLENGE)
                .body("detail", equalTo("send one Authorization header, not several"));
        client().header("Authorization", "Bearer not-a-key")
                .header("Authorization", "Bearer " + AuthEnabledProfile.KEY_A)
                .get("/v1/locks/{lcid}", lcid).then().statusCode(401);
        client().auth().oauth2(AuthEnabledProfile.KEY_A).get("/v1/locks/{lcid}", lcid).then()
                .statusCode(200).body("held", equalTo(false));
    }

    @Test
    void given_workload_tokens_are_off_when_a_jwt_is_sent_then_401_saying_so() {
        String jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl";
        client().auth().oauth2(jwt).get("/v1/locks/{lcid}", "order").then().statusCode(401)
                .header("WWW-Authenticate", BearerAuthMechanism.CHALLENGE)
                .body("detail", equalTo("this service does not accept JWTs: send an API key"));
    }

    @Test
    void given_no_key_and_a_broken_body_then_401_comes_first() {
        client().body("{broken").post("/v1/locks/{lcid}/acquire", "order").then().statusCode(401);
    }

    @Test
    void given_a_valid_key_then_the_protocol_works() {
        String lcid = unique("order");
        String token = client().auth().oauth2(AuthEnabledProfile.KEY_A).body(fields("requestId", "a"))
                .post("/v1/locks/{lcid}/acquire", lcid).then().statusCode(200).extract().path("token");
        client().auth().oauth2(AuthEnabledProfile.KEY_A).body(fields("token", token, "requestId", "a"))
                .post("/v1/locks/{lcid}/complete", lcid).then().statusCode(200).body("status", equalTo("RELEASED"));
    }

    @Test
    void given_a_worker_key_when_running_operator_actions_then_403_and_an_admin_key_may() {
        client().auth().oauth2(AuthEnabledProfile.KEY_A).get("/v1/dead-letters").then().statusCode(403)
                .contentType("application/problem+json").body("code", equalTo("FORBIDDEN"));
        client().auth().oauth2(AuthEnabledProfile.KEY_A).post("/v1/locks/{l}/requests/{r}/retry", "order", "x")
                .then().statusCode(403);
        client().auth().oauth2(AuthEnabledProfile.KEY_A).get("/v1/locks/{l}/queue", "order").then().statusCode(403)
                .contentType("application/problem+json").body("code", equalTo("FORBIDDEN"));
        client().auth().oauth2(AuthEnabledProfile.ADMIN_KEY_A).get("/v1/dead-letters").then().statusCode(200);
        client().auth().oauth2(AuthEnabledProfile.ADMIN_KEY_A).get("/v1/locks/{l}/queue", "order").then().statusCode(200);
    }

    @Test
    void the_management_port_needs_no_key() {
        given().get(health + "/ready").then().statusCode(200);
    }
}
