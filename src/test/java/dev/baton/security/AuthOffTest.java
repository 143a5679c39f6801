package dev.baton.security;

import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.unique;
import static org.hamcrest.Matchers.equalTo;

import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * With authentication off (dev mode, and the test profile) credentials are ignored and every
 * caller is the default tenant's admin (docs/security.md): a client configured with a key, as
 * every client README's first example is, must work against dev mode unchanged.
 */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class AuthOffTest {

    static List<String> credentials() {
        return List.of(
                "Bearer my-worker-key",                                            // an API key
                "Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl",         // a JWT-shaped token
                "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",                     // alg none, no signature
                "Bearer !!garbage!! with spaces",                                  // garbage
                "Basic dXNlcjpwYXNz");                                             // another scheme
    }

    @ParameterizedTest
    @MethodSource("credentials")
    void given_auth_off_when_a_credential_is_sent_then_a_lock_call_works_as_without_one(String authorization) {
        String lcid = unique("order");
        client().header("Authorization", authorization).body(fields("requestId", "a"))
                .post("/v1/locks/{lcid}/acquire", lcid).then()
                .statusCode(200).body("status", equalTo("ACQUIRED"));
        client().header("Authorization", authorization).get("/v1/locks/{lcid}", lcid).then()
                .statusCode(200).body("held", equalTo(true));
    }

    @ParameterizedTest
    @MethodSource("credentials")
    void given_auth_off_when_a_credential_is_sent_then_an_operator_call_works_as_the_admin(String authorization) {
        client().header("Authorization", authorization).get("/v1/dead-letters").then().statusCode(200);
        client().header("Authorization", authorization).get("/v1/busy-locks").then().statusCode(200);
    }
}
