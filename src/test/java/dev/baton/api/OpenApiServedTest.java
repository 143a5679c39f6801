package dev.baton.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;

import org.junit.jupiter.api.Test;

import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;

@QuarkusTest
@WithTestResource(RedisTestResource.class)
class OpenApiServedTest {

    @Test
    void the_contract_in_openapi_yaml_is_served_at_q_openapi() {
        given().get("/q/openapi").then().statusCode(200)
                .body(containsString("/v1/locks/{lcid}/acquire"))
                .body(containsString("/v1/locks/{lcid}/requests/{requestId}"))
                .body(containsString("BACKEND_UNAVAILABLE"));
    }
}
