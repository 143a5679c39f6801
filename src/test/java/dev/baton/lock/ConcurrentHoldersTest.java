package dev.baton.lock;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.baton.testing.Api;
import dev.baton.testing.Contract;
import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * 32 client threads on 4 hot lcids run the holder loop of protocol.md, each doing a slow
 * read-modify-write of a shared counter. Without mutual exclusion the counters lose updates.
 */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class ConcurrentHoldersTest {

    private static final int THREADS = 32;
    private static final int LCIDS = 4;
    private static final int SUBMISSIONS_PER_THREAD = 12;

    private static final ObjectMapper JSON = new ObjectMapper();

    @TestHTTPResource("/")
    URI base;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    /** The entity's database: a counter, the fence of the last write, and an overlap detector. */
    static final class Entity {
        final AtomicInteger inside = new AtomicInteger();
        final AtomicLong lastFence = new AtomicLong();
        volatile int counter;
        final AtomicInteger overlaps = new AtomicInteger();
        final AtomicInteger fenceRegressions = new AtomicInteger();
    }

    @Test
    void given_32_threads_on_4_hot_lcids_when_all_run_the_holder_loop_then_every_update_lands_once_in_fence_order()
            throws Exception {
        runHolders("hot", 0);
    }

    /** Batch handoff: each holder takes up to 5 at a time, works the batch under its one fence. */
    @Test
    void given_32_threads_on_4_hot_lcids_taking_batches_of_5_then_every_update_lands_once_in_fence_order()
            throws Exception {
        runHolders("batch", 5);
    }

    /** take 0: the v1 loop, one request per complete, no take sent. */
    private void runHolders(String name, int take) throws Exception {
        String run = Api.unique(name);
        List<String> lcids = new ArrayList<>();
        Map<String, Entity> entities = new ConcurrentHashMap<>();
        for (int i = 0; i < LCIDS; i++) {
            lcids.add(run + "-" + i);
            entities.put(run + "-" + i, new Entity());
        }
        Map<String, AtomicInteger> processed = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> submitted = new ConcurrentHashMap<>();

        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int thread = t;
            workers.add(pool.submit(() -> {
                for (int s = 0; s < SUBMISSIONS_PER_THREAD; s++) {
                    String lcid = lcids.get(ThreadLocalRandom.current().nextInt(LCIDS));
                    String requestId = "t" + thread + "-s" + s;
                    submitted.computeIfAbsent(lcid, k -> new AtomicInteger()).incrementAndGet();
                    holderLoop(lcid, requestId, entities.get(lcid), processed, take);
                }
                return null;
            }));
        }
        for (Future<?> worker : workers) {
            worker.get(120, TimeUnit.SECONDS);
        }
        pool.shutdown();

        int total = THREADS * SUBMISSIONS_PER_THREAD;
        assertThat(processed).hasSize(total);
        assertThat(processed.values()).allSatisfy(count -> assertThat(count.get()).isEqualTo(1));
        for (String lcid : lcids) {
            Entity entity = entities.get(lcid);
            assertThat(entity.overlaps.get()).as("overlapping holders on %s", lcid).isZero();
            assertThat(entity.fenceRegressions.get()).as("fence went backwards on %s", lcid).isZero();
            assertThat(entity.counter).as("counter of %s", lcid).isEqualTo(submitted.get(lcid).get());
            JsonNode view = get("/v1/locks/" + lcid);
            assertThat(view.get("held").asBoolean()).isFalse();
            assertThat(view.get("queueLength").asInt()).as("left queued on %s", lcid).isZero();
        }
        System.out.printf("concurrency (take %d): %d requests over %d lcids by %d threads, counters %s%n", take, total,
                LCIDS, THREADS, lcids.stream().map(l -> l + "=" + entities.get(l).counter).toList());
    }

    private void holderLoop(String lcid, String requestId, Entity entity, Map<String, AtomicInteger> processed,
            int take) throws Exception {
        Map<String, Object> acquire = new HashMap<>(Map.of("requestId", requestId, "payload", Map.of("by", requestId)));
        if (take > 0) {
            acquire.put("take", take);
        }
        JsonNode r = post(lcid, "acquire", acquire);
        while (r.get("status").asText().equals("ACQUIRED") || r.get("status").asText().equals("NEXT")) {
            List<String> working = new ArrayList<>();
            if (r.get("status").asText().equals("ACQUIRED")) {
                working.add(requestId);
            } else {
                r.get("requests").forEach(item -> working.add(item.get("requestId").asText()));
                assertThat(working.get(0)).isEqualTo(r.get("request").get("requestId").asText());
                assertThat(working.size()).isBetween(1, Math.max(1, take));
            }
            work(entity, r.get("fence").asLong(), working.size());
            working.forEach(id -> processed.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet());
            Map<String, Object> complete = new HashMap<>(Map.of("token", r.get("token").asText()));
            if (take > 0) {
                complete.put("take", take);
                complete.put("completed", working.stream().map(id -> Map.of("requestId", id)).toList());
            } else {
                complete.put("requestId", working.get(0));
            }
            r = post(lcid, "complete", complete);
        }
        assertThat(r.get("status").asText()).isIn("QUEUED", "RELEASED");
    }

    /** One write of the entity's database under one fence; a batch of n adds n in that one write. */
    private static void work(Entity entity, long fence, int n) throws InterruptedException {
        if (entity.inside.incrementAndGet() != 1) {
            entity.overlaps.incrementAndGet();
        }
        if (fence <= entity.lastFence.get()) {
            entity.fenceRegressions.incrementAndGet();
        }
        entity.lastFence.set(fence);
        int read = entity.counter;
        Thread.sleep(ThreadLocalRandom.current().nextInt(2)); // widen the read-modify-write window
        entity.counter = read + n;
        entity.inside.decrementAndGet();
    }

    private JsonNode post(String lcid, String operation, Map<String, Object> body) throws Exception {
        String path = "/v1/locks/" + lcid + "/" + operation;
        HttpRequest request = HttpRequest.newBuilder(base.resolve(path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
                .build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        Contract.check("POST", path, response);
        assertThat(response.statusCode()).as(response.body()).isIn(200, 202);
        return JSON.readTree(response.body());
    }

    private JsonNode get(String path) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(base.resolve(path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        Contract.check("GET", path, response);
        return JSON.readTree(response.body());
    }
}
