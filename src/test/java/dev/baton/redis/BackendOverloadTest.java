package dev.baton.redis;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import dev.baton.testing.Contract;
import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * More calls in flight than the shared Redis connection may pipeline: the extra ones are refused
 * with 503 (never 500, never a hang), as openapi.yaml lists it, and later calls are served.
 */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
@TestProfile(BackendOverloadTest.OneConnectionFewInFlight.class)
class BackendOverloadTest {

    public static class OneConnectionFewInFlight implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("baton.backend.connections", "1", "quarkus.redis.max-waiting-handlers", "2");
        }
    }

    @TestHTTPResource("/")
    URI base;


    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @Test
    void given_more_calls_in_flight_than_allowed_when_they_arrive_together_then_the_extra_ones_get_503_and_the_rest_work()
            throws Exception {
        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        AtomicInteger unexpected = new AtomicInteger();
        for (int burst = 0; burst < 10 && !statuses.containsKey(503); burst++) {
            List<CompletableFuture<Void>> calls = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                String path = "/v1/locks/" + unique("burst") + "/acquire";
                HttpRequest request = HttpRequest.newBuilder(base.resolve(path))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"requestId\":\"r\"}")).build();
                calls.add(http.sendAsync(request, HttpResponse.BodyHandlers.ofString()).thenAccept(response -> {
                    Contract.check("POST", path, response);
                    statuses.computeIfAbsent(response.statusCode(), code -> new AtomicInteger()).incrementAndGet();
                    boolean refused = response.statusCode() == 503
                            && response.body().contains("\"BACKEND_UNAVAILABLE\"")
                            && response.headers().firstValue("Retry-After").isPresent();
                    if (response.statusCode() != 200 && !refused) {
                        unexpected.incrementAndGet();
                    }
                }));
            }
            CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        }
        System.out.println("overload statuses: " + statuses);

        assertThat(unexpected).hasValue(0);
        assertThat(statuses).containsKeys(200, 503).containsOnlyKeys(200, 503);
        // Calls after the burst are served.
        acquire(unique("after"), "a").then().statusCode(200);
    }
}
