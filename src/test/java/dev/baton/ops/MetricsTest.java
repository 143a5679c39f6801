package dev.baton.ops;

import static dev.baton.testing.Api.abort;
import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.heartbeat;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.net.URL;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.baton.testing.Metrics;
import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;

/** Known operations, exact metric deltas. The test profile sets baton.max-attempts=3. */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class MetricsTest {

    @TestHTTPResource(value = "/metrics", management = true)
    URL metricsUrl;

    @Test
    void given_a_known_sequence_of_operations_then_every_domain_metric_moves_by_exactly_its_count() {
        Metrics before = Metrics.scrape(metricsUrl.toString());
        String lcid = unique("order");

        String token = acquire(lcid, "a").then().statusCode(200).extract().path("token");     // acquired
        acquire(lcid, "b").then().statusCode(202);                                             // queued
        acquire(lcid, "c").then().statusCode(202);                                             // queued
        heartbeat(lcid, fields("token", token)).then().statusCode(200);                        // heartbeat
        heartbeat(lcid, fields("token", "wrong")).then().statusCode(409);                      // lease lost
        complete(lcid, token, "a").then().body("request.requestId", equalTo("b"));             // complete next, wait, hold
        abort(lcid, fields("requestId", "c")).then().statusCode(200);                          // abort by waiter
        abort(lcid, fields("requestId", "b", "token", token, "requeue", true)).then().statusCode(200); // holder, requeued
        String t2 = acquire(lcid, "d").then().body("request.requestId", equalTo("b"))          // next, wait
                .extract().path("token");
        complete(lcid, "wrong", "b").then().statusCode(409);                                   // lease lost
        acquire(lcid, "a").then().statusCode(409);                                             // rejected (duplicate)
        complete(lcid, t2, "b").then().body("request.requestId", equalTo("d"));                // complete next, wait, hold
        complete(lcid, t2, "d").then().body("status", equalTo("RELEASED"));                    // complete released, hold

        String poison = unique("poison");
        String p = acquire(poison, "x").then().statusCode(200).extract().path("token");        // acquired
        for (int attempt = 1; attempt <= 3; attempt++) {
            abort(poison, fields("requestId", "x", "token", p, "requeue", true)).then().statusCode(200); // holder
            if (attempt < 3) {                                                                  // requeued, then dead
                p = acquire(poison, "r" + attempt).then().body("request.requestId", equalTo("x")) // next, wait
                        .extract().path("token");
            }
        }

        Metrics after = Metrics.scrape(metricsUrl.toString());
        Map<String, Double> expected = Map.ofEntries(
                Map.entry("baton_acquire_total{outcome=\"acquired\"}", 2.0),
                Map.entry("baton_acquire_total{outcome=\"queued\"}", 2.0),
                Map.entry("baton_acquire_total{outcome=\"next\"}", 3.0),
                Map.entry("baton_acquire_total{outcome=\"rejected\"}", 1.0),
                Map.entry("baton_complete_total{outcome=\"next\"}", 2.0),
                Map.entry("baton_complete_total{outcome=\"released\"}", 1.0),
                Map.entry("baton_abort_total{by=\"holder\"}", 4.0),
                Map.entry("baton_abort_total{by=\"waiter\"}", 1.0),
                Map.entry("baton_heartbeat_total", 1.0),
                Map.entry("baton_lease_lost_total", 2.0),
                Map.entry("baton_requeued_total", 3.0),
                Map.entry("baton_dead_total", 1.0),
                Map.entry("baton_rejected_total{code=\"LOCK_LOST\"}", 2.0),
                Map.entry("baton_rejected_total{code=\"DUPLICATE_REQUEST\"}", 1.0),
                Map.entry("baton_rejected_total{code=\"QUEUE_FULL\"}", 0.0),
                Map.entry("baton_queue_wait_seconds_count", 5.0),
                Map.entry("baton_hold_seconds_count", 3.0),
                Map.entry("baton_operation_seconds_count{operation=\"acquire\"}", 8.0),
                Map.entry("baton_operation_seconds_count{operation=\"heartbeat\"}", 2.0),
                Map.entry("baton_operation_seconds_count{operation=\"complete\"}", 4.0),
                Map.entry("baton_operation_seconds_count{operation=\"abort\"}", 5.0));
        expected.forEach((series, delta) -> assertThat(after.delta(before, series)).as(series).isEqualTo(delta));
        assertThat(after.has("baton_operation_seconds_bucket{operation=\"acquire\",le=\"+Inf\"}")).isTrue();
        for (String name : after.names()) {
            assertThat(name).doesNotContain(lcid).doesNotContain(poison);
        }
    }
}
