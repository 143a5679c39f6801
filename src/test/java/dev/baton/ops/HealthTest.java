package dev.baton.ops;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;

import java.net.URL;

import org.junit.jupiter.api.Test;

import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;

@QuarkusTest
@WithTestResource(RedisTestResource.class)
class HealthTest {

    // Management URLs are relative to its root path, /q.
    @TestHTTPResource(value = "/health", management = true)
    URL health;

    @TestHTTPResource(value = "/metrics", management = true)
    URL metrics;

    @Test
    void given_redis_up_then_live_ready_and_started_are_up_on_the_management_port() {
        given().get(health + "/live").then().statusCode(200).body("status", equalTo("UP"));
        given().get(health + "/ready").then().statusCode(200).body("status", equalTo("UP"))
                .body("checks.name", hasItem("baton-lock-store"));
        given().get(health + "/started").then().statusCode(200).body("status", equalTo("UP"));
        given().get(metrics.toString()).then().statusCode(200);
    }

    @Test
    void the_api_port_serves_neither_health_nor_metrics() {
        given().get("/q/health/ready").then().statusCode(404);
        given().get("/q/metrics").then().statusCode(404);
        given().get("/q/openapi").then().statusCode(200);
    }
}
