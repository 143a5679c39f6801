package dev.baton.ops;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;

import java.net.URL;

import org.junit.jupiter.api.Test;

import dev.baton.testing.NoRedisResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;

@QuarkusTest
@WithTestResource(NoRedisResource.class)
class HealthWithoutRedisTest {

    // Management URLs are relative to its root path, /q.
    @TestHTTPResource(value = "/health", management = true)
    URL health;

    @Test
    void given_redis_down_then_readiness_is_down_and_liveness_stays_up() {
        given().get(health + "/ready").then().statusCode(503).body("status", equalTo("DOWN"));
        given().get(health + "/live").then().statusCode(200).body("status", equalTo("UP"));
    }
}
