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
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.baton.testing.Api;
import dev.baton.testing.RestartableRedisResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * A bounded chaos soak: 16 workers over 8 lcids for 30 s, holders that die mid-work (they stop
 * heartbeating and never complete), zombies (they stall past their lease, then still write and
 * complete), aborts with requeue, poison requests that always fail,
 * and one restart of redis-server (AOF on) in the middle. Afterwards every request Baton
 * acknowledged must be DONE or DEAD, and the simulated database must never have accepted two
 * overlapping holders unless the older one was fenced off as stale.
 */
@QuarkusTest
@WithTestResource(RestartableRedisResource.class)
class ChaosSoakTest {

    private static final int WORKERS = 16;
    private static final int LCIDS = 8;
    private static final Duration SUBMIT_FOR = Duration.ofSeconds(30);
    private static final Duration DRAIN_WITHIN = Duration.ofSeconds(60);
    private static final int LEASE_MS = 800;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TestHTTPResource("/")
    URI base;

    @jakarta.inject.Inject
    io.quarkus.redis.datasource.RedisDataSource redis;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();

    private final Map<String, String> submitted = new ConcurrentHashMap<>(); // requestId -> lcid
    private final Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();
    private final AtomicInteger deaths = new AtomicInteger();
    private final AtomicInteger requeueAborts = new AtomicInteger();
    private final AtomicInteger unavailable = new AtomicInteger();
    private final AtomicInteger lockLost = new AtomicInteger();
    private final AtomicInteger queueFull = new AtomicInteger();
    private volatile boolean chaosOn = true;
    private final AtomicInteger zombies = new AtomicInteger();
    private final Map<String, FencedStore> stores = new ConcurrentHashMap<>();

    /**
     * The entity's database with fencing: it remembers the highest fence it has seen and refuses
     * any operation with a lower one. It also watches for overlapping holders.
     */
    static final class FencedStore {
        private long highestFence;
        private final Map<Long, Boolean> inside = new HashMap<>();
        int staleRejections;
        int overlapsFencedOff;
        int violations;

        synchronized boolean begin(long fence) {
            for (long other : inside.keySet()) {
                if (other >= fence) {
                    violations++; // a newer grant must carry a larger fence than every older holder
                } else {
                    overlapsFencedOff++; // the older holder is still working: its fence is now stale
                }
            }
            if (fence < highestFence) {
                staleRejections++;
                return false;
            }
            highestFence = fence;
            inside.put(fence, true);
            return true;
        }

        synchronized boolean commit(long fence) {
            inside.remove(fence);
            if (fence < highestFence) {
                staleRejections++;
                return false;
            }
            return true;
        }

        synchronized void walkAway(long fence) {
            inside.remove(fence);
        }
    }

    @Test
    void given_holder_deaths_requeues_and_a_redis_restart_then_every_acknowledged_request_ends_done_or_dead()
            throws Exception {
        String run = Api.unique("soak");
        List<String> lcids = new ArrayList<>();
        for (int i = 0; i < LCIDS; i++) {
            lcids.add(run + "-" + i);
            stores.put(run + "-" + i, new FencedStore());
        }
        long submitUntil = System.nanoTime() + SUBMIT_FOR.toNanos();

        ExecutorService pool = Executors.newFixedThreadPool(WORKERS + 1);
        Future<?> chaos = pool.submit(() -> {
            Thread.sleep(SUBMIT_FOR.toMillis() / 2);
            RestartableRedisResource.stopRedis();
            Thread.sleep(1000);
            RestartableRedisResource.startRedis();
            return null;
        });
        List<Future<?>> workers = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++) {
            int worker = w;
            workers.add(pool.submit(() -> {
                int n = 0;
                while (System.nanoTime() < submitUntil) {
                    String lcid = lcids.get(ThreadLocalRandom.current().nextInt(LCIDS));
                    boolean poison = ThreadLocalRandom.current().nextInt(100) < 2;
                    String requestId = (poison ? "poison-" : "w") + worker + "-" + n++;
                    JsonNode r = submit(lcid, requestId, poison);
                    if (r != null) {
                        holderLoop(lcid, r);
                    }
                    if (n % 4 == 0) {
                        claimAndWork();
                    }
                    Thread.sleep(5 + ThreadLocalRandom.current().nextInt(10)); // a service does other things too
                }
                return null;
            }));
        }
        for (Future<?> worker : workers) {
            worker.get(2, TimeUnit.MINUTES);
        }
        chaos.get(1, TimeUnit.MINUTES);

        // Drain: healthy workers that only claim, until every acknowledged request has ended.
        chaosOn = false;
        long drainUntil = System.nanoTime() + DRAIN_WITHIN.toNanos();
        Set<String> open = new java.util.HashSet<>(submitted.keySet());
        Map<String, Integer> done = new ConcurrentHashMap<>();
        Map<String, Integer> dead = new ConcurrentHashMap<>();
        while (!open.isEmpty() && System.nanoTime() < drainUntil) {
            List<Future<?>> drainers = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                drainers.add(pool.submit(() -> {
                    while (claimAndWork()) {
                        // keep claiming while there is orphaned work
                    }
                    return null;
                }));
            }
            for (Future<?> drainer : drainers) {
                drainer.get(1, TimeUnit.MINUTES);
            }
            boolean quiet = lcids.stream().allMatch(lcid -> {
                try {
                    JsonNode view = get("/v1/locks/" + lcid);
                    return !view.get("held").asBoolean() && view.get("queueLength").asInt() == 0;
                } catch (Exception e) {
                    return false;
                }
            });
            if (!quiet) {
                Thread.sleep(LEASE_MS); // let abandoned leases run out, then claim again
                continue;
            }
            for (String requestId : List.copyOf(open)) {
                JsonNode view = get("/v1/locks/" + submitted.get(requestId) + "/requests/" + requestId);
                String state = view.path("state").asText();
                if (state.equals("DONE")) {
                    done.put(requestId, view.get("attempt").asInt());
                    open.remove(requestId);
                } else if (state.equals("DEAD")) {
                    dead.put(requestId, view.get("attempt").asInt());
                    open.remove(requestId);
                }
            }
            if (!open.isEmpty()) {
                break; // every lcid is quiet: what is still open will not end by itself
            }
        }
        pool.shutdownNow();

        int redelivered = (int) deliveries.values().stream().filter(c -> c.get() > 1).count();
        int stale = stores.values().stream().mapToInt(s -> s.staleRejections).sum();
        int fencedOff = stores.values().stream().mapToInt(s -> s.overlapsFencedOff).sum();
        int violations = stores.values().stream().mapToInt(s -> s.violations).sum();
        System.out.printf("chaos soak: submitted=%d done=%d dead=%d lost=%d redelivered=%d holder-deaths=%d zombies=%d "
                + "requeue-aborts=%d stale-fence-rejections=%d overlaps-fenced-off=%d violations=%d "
                + "503-during-restart=%d lock-lost=%d queue-full=%d%n", submitted.size(), done.size(), dead.size(),
                open.size(), redelivered, deaths.get(), zombies.get(), requeueAborts.get(), stale, fencedOff, violations,
                unavailable.get(), lockLost.get(), queueFull.get());

        if (!open.isEmpty()) {
            Map<String, Integer> states = new HashMap<>();
            for (String requestId : open) {
                JsonNode view = get("/v1/locks/" + submitted.get(requestId) + "/requests/" + requestId);
                states.merge(view.path("state").asText("404"), 1, Integer::sum);
            }
            System.out.println("chaos soak: open requests by state " + states);
            for (String lcid : lcids) {
                System.out.println("chaos soak: " + get("/v1/locks/" + lcid) + " index score "
                        + redis.sortedSet(String.class).zscore("baton:default:claimable", lcid));
            }
            System.out.println("chaos soak: index size " + redis.sortedSet(String.class).zcard("baton:default:claimable")
                    + ", a claim now answers " + post("/v1/claims", Map.of()).statusCode());
        }
        assertThat(open).as("acknowledged requests that neither ended DONE nor DEAD").isEmpty();
        assertThat(violations).as("overlapping holders without a larger fence for the newer one").isZero();
        assertThat(submitted.size()).isGreaterThan(200);
        assertThat(deaths.get()).isPositive();
        assertThat(stale).as("zombie writes the fence turned away").isPositive();
        assertThat(unavailable.get()).as("the restart was felt").isPositive();
        assertThat(done.keySet()).noneMatch(id -> id.startsWith("poison-"));
    }

    /**
     * Acquire, retried through 503s with the same requestId until Baton acknowledges it; null
     * when the queue is full (429): not acknowledged, so the caller keeps the work itself.
     */
    private JsonNode submit(String lcid, String requestId, boolean poison) throws Exception {
        Map<String, Object> body = Map.of("requestId", requestId, "leaseMs", LEASE_MS, "payload",
                Map.of("poison", poison));
        while (true) {
            HttpResponse<String> response = post("/v1/locks/" + lcid + "/acquire", body);
            if (response.statusCode() == 200 || response.statusCode() == 202) {
                submitted.put(requestId, lcid);
                return JSON.readTree(response.body());
            }
            if (response.statusCode() == 409) {
                submitted.put(requestId, lcid); // known already: a retry after a lost answer
                return JSON.readTree("{\"status\":\"DUPLICATE\"}");
            }
            backOff(response);
            if (response.statusCode() == 429) {
                queueFull.incrementAndGet();
                return null;
            }
        }
    }

    /** Claims orphaned work and runs it; false when there was none. */
    private boolean claimAndWork() throws Exception {
        HttpResponse<String> response = post("/v1/claims", Map.of("leaseMs", LEASE_MS));
        if (response.statusCode() == 204) {
            return false;
        }
        if (response.statusCode() != 200) {
            backOff(response);
            return true;
        }
        JsonNode r = JSON.readTree(response.body());
        holderLoop(r.get("lcid").asText(), r);
        return true;
    }

    private void holderLoop(String lcid, JsonNode r) throws Exception {
        String self = r.path("requestId").asText();
        while (r.path("status").asText().equals("ACQUIRED") || r.path("status").asText().equals("NEXT")) {
            String working = r.get("status").asText().equals("ACQUIRED") ? self
                    : r.get("request").get("requestId").asText();
            boolean poison = working.startsWith("poison-");
            String token = r.get("token").asText();
            long fence = r.get("fence").asLong();
            deliveries.computeIfAbsent(working, k -> new AtomicInteger()).incrementAndGet();
            FencedStore store = stores.get(lcid);
            if (store == null) {
                return; // another run's lcid
            }
            store.begin(fence);
            int dice = chaosOn ? ThreadLocalRandom.current().nextInt(100) : 99;
            if (dice < 4) {
                deaths.incrementAndGet();
                store.walkAway(fence); // dies mid-work: no heartbeat, no complete
                return;
            }
            if (dice < 6) {
                // A zombie: stalls past its lease without heartbeating, then still tries to write.
                zombies.incrementAndGet();
                Thread.sleep(LEASE_MS + 400);
                store.commit(fence);
                call(lcid, "complete", Map.of("token", token, "requestId", working));
                return;
            }
            Thread.sleep(ThreadLocalRandom.current().nextInt(3));
            if (poison || dice < 10) {
                requeueAborts.incrementAndGet();
                store.walkAway(fence);
                call(lcid, "abort", Map.of("requestId", working, "token", token, "requeue", true,
                        "reason", poison ? "poison" : "chaos"));
                return;
            }
            store.commit(fence);
            r = call(lcid, "complete", Map.of("token", token, "requestId", working));
        }
    }

    /** A holder call retried through 503s; LOCK_LOST ends the loop. */
    private JsonNode call(String lcid, String operation, Map<String, Object> body) throws Exception {
        while (true) {
            HttpResponse<String> response = post("/v1/locks/" + lcid + "/" + operation, body);
            if (response.statusCode() == 200) {
                return JSON.readTree(response.body());
            }
            if (response.statusCode() == 409) {
                lockLost.incrementAndGet();
                return JSON.readTree("{\"status\":\"LOCK_LOST\"}");
            }
            backOff(response);
        }
    }

    private void backOff(HttpResponse<String> response) throws InterruptedException {
        assertThat(response.statusCode()).as(response.body()).isIn(429, 503);
        if (response.statusCode() == 503) {
            unavailable.incrementAndGet();
        }
        Thread.sleep(100 + ThreadLocalRandom.current().nextInt(200));
    }

    private HttpResponse<String> post(String path, Map<String, Object> body) throws Exception {
        try {
            return http.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException e) {
            throw new AssertionError("Baton itself must stay up", e);
        }
    }

    private JsonNode get(String path) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(base.resolve(path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(response.body());
    }
}
