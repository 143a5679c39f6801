package dev.baton.lock;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.request;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;

/**
 * Two services of different kinds on the same lcids (protocol v1.1 wait mode): a payment
 * service that can only capture payments and a stock service that can only allocate stock. Each
 * submits its own requests as {@code wait} and long-polls for its turns, one worker per lcid;
 * neither ever holds the other's work. Every request is done exactly once, in submission order
 * per lcid, with rising fences.
 */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class TwoKindsOfServicesTest {

    private static final int LCIDS = 3;
    private static final int REQUESTS_PER_LCID = 16;

    /** One request done: by which service, under which fence. */
    record Done(String requestId, String doneBy, long fence) {
    }

    @Test
    void given_payment_and_stock_requests_interleaved_on_three_lcids_when_each_service_waits_for_its_own_turns_then_all_are_done_once_in_order()
            throws Exception {
        Random random = new Random(42);
        Map<String, List<String>> submitted = new HashMap<>();
        Map<String, List<Done>> done = new HashMap<>();
        Map<String, String> gates = new HashMap<>();
        for (int l = 0; l < LCIDS; l++) {
            String lcid = unique("order");
            // A holder first, so that every request below is queued in the order of this loop.
            gates.put(lcid, acquire(lcid, "gate").then().statusCode(200).extract().path("token"));
            List<String> order = new ArrayList<>();
            for (int i = 0; i < REQUESTS_PER_LCID; i++) {
                String requestId = (random.nextBoolean() ? "pay-" : "stock-") + i;
                acquire(lcid, fields("requestId", requestId, "mode", "wait", "payload", fields("n", i))).then()
                        .statusCode(202);
                order.add(requestId);
            }
            submitted.put(lcid, order);
            done.put(lcid, Collections.synchronizedList(new ArrayList<>()));
        }

        ExecutorService workers = Executors.newCachedThreadPool();
        List<Future<?>> running = new ArrayList<>();
        for (String kind : List.of("pay", "stock")) {
            for (String lcid : submitted.keySet()) {
                List<String> mine = submitted.get(lcid).stream().filter(id -> id.startsWith(kind + "-")).toList();
                running.add(workers.submit(() -> work(kind, lcid, mine, done.get(lcid))));
            }
        }
        for (String lcid : gates.keySet()) {
            complete(lcid, gates.get(lcid), "gate").then().statusCode(200);
        }
        for (Future<?> worker : running) {
            worker.get(120, TimeUnit.SECONDS);
        }
        workers.shutdown();

        for (String lcid : submitted.keySet()) {
            List<Done> log = done.get(lcid);
            assertThat(log).extracting(Done::requestId).as("exactly once, in submission order")
                    .containsExactlyElementsOf(submitted.get(lcid));
            assertThat(log).allMatch(d -> d.requestId().startsWith(d.doneBy() + "-"), "done by its own kind");
            for (int i = 1; i < log.size(); i++) {
                assertThat(log.get(i).fence()).as("fences rise").isGreaterThan(log.get(i - 1).fence());
            }
            for (String requestId : submitted.get(lcid)) {
                assertThat(request(lcid, requestId).jsonPath().getString("state")).isEqualTo("DONE");
            }
        }
    }

    /** One service's worker on one lcid: waits for the turn of each of its requests, in order. */
    private static Void work(String kind, String lcid, List<String> requestIds, List<Done> log) {
        for (String requestId : requestIds) {
            Response turn;
            do {
                turn = acquire(lcid, fields("requestId", requestId, "mode", "wait", "waitMs", 5000));
                assertThat(turn.statusCode()).as("%s on %s: %s", requestId, lcid, turn.asString()).isIn(200, 202);
            } while (turn.statusCode() == 202);
            assertThat(turn.jsonPath().getString("status")).isEqualTo("ACQUIRED");
            log.add(new Done(requestId, kind, turn.jsonPath().getLong("fence")));
            Response released = complete(lcid, turn.jsonPath().getString("token"), requestId);
            assertThat(released.jsonPath().getString("status")).as("a wait holder is never handed others' work")
                    .isEqualTo("RELEASED");
        }
        return null;
    }
}
