package dev.baton.redis;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import io.restassured.response.Response;

/** What every caller sees while Redis cannot serve: a fast 503 with Retry-After, never a hang. */
abstract class BackendScenarios {

    static final long WITHIN_MS = 2500;

    void then_every_operation_answers_503_backend_unavailable_quickly() {
        String lcid = unique("order");
        assertUnavailable(() -> acquire(lcid, "a"));
        assertUnavailable(() -> client().body("{\"token\":\"t\",\"requestId\":\"a\"}")
                .post("/v1/locks/{lcid}/complete", lcid));
        assertUnavailable(() -> client().get("/v1/locks/{lcid}", lcid));
        assertUnavailable(() -> client().get("/v1/locks/{lcid}/requests/{r}", lcid, "a"));
    }

    private static void assertUnavailable(java.util.function.Supplier<Response> call) {
        long start = System.nanoTime();
        Response response = call.get();
        long tookMs = (System.nanoTime() - start) / 1_000_000;

        response.then().statusCode(503)
                .contentType("application/problem+json")
                .header("Retry-After", "1")
                .body("code", equalTo("BACKEND_UNAVAILABLE"));
        assertThat(tookMs).as("503 answered after %d ms", tookMs).isLessThan(WITHIN_MS);
        System.out.printf("backend unavailable: 503 in %d ms%n", tookMs);
    }
}
