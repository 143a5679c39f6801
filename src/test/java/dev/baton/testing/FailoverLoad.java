package dev.baton.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
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

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A closed-loop load of clients as services would run them, for failover tests: each submits a
 * request on one of a few dozen lcids; queued (202) ones are left to the holders, acquired ones are
 * worked on and completed, NEXT included, until RELEASED; orphaned work is claimed at the end. Every call is retried with the same
 * body through 503s and broken connections, as the protocol allows. It records what Baton
 * acknowledged (QUEUED, ACTIVE, DONE) and every grant's fence, so that after a failover
 * {@link #verify} can say what was lost.
 */
public final class FailoverLoad {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Past this, the service is taken to be down for good. */
    private static final Duration GIVE_UP_AFTER = Duration.ofSeconds(45);

    public enum Ack {
        QUEUED, ACTIVE, DONE
    }

    record Grant(long fence, long sentNanos, long answeredNanos) {
    }

    private final URI base;
    private final List<String> lcids;
    private final int leaseMs;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();
    private final Map<String, Ack> acked = new ConcurrentHashMap<>();
    private final Map<String, String> lcidOf = new ConcurrentHashMap<>();
    private final Map<String, List<Grant>> grants = new ConcurrentHashMap<>();
    private final AtomicLong first503 = new AtomicLong();
    private final AtomicLong last503 = new AtomicLong();
    private final AtomicInteger unavailable = new AtomicInteger();
    private final AtomicInteger lockLost = new AtomicInteger();
    private final AtomicInteger answered = new AtomicInteger();
    private final AtomicLong successAfterLast503 = new AtomicLong();
    private final long startNanos = System.nanoTime();
    private volatile boolean running = true;
    private ExecutorService pool;
    private final List<Future<?>> clients = new ArrayList<>();

    public FailoverLoad(URI base, String prefix, int lcidCount, int leaseMs) {
        this.base = base;
        this.leaseMs = leaseMs;
        this.lcids = new ArrayList<>();
        for (int i = 0; i < lcidCount; i++) {
            lcids.add(prefix + "-" + i);
        }
    }

    public FailoverLoad start(int clientCount) {
        pool = Executors.newFixedThreadPool(clientCount);
        for (int c = 0; c < clientCount; c++) {
            int client = c;
            clients.add(pool.submit(() -> {
                loop(client);
                return null;
            }));
        }
        return this;
    }

    /** Stops submitting; every client finishes the requests it holds. */
    public void stop() throws Exception {
        running = false;
        for (Future<?> client : clients) {
            client.get(2, TimeUnit.MINUTES);
        }
        pool.shutdown();
    }

    private void loop(int client) throws Exception {
        int n = 0;
        while (running) {
            String lcid = lcids.get(ThreadLocalRandom.current().nextInt(lcids.size()));
            String requestId = "c" + client + "-" + n++;
            lcidOf.put(requestId, lcid);
            long sent = System.nanoTime();
            Answer r = call("/v1/locks/" + lcid + "/acquire", Map.of("requestId", requestId, "leaseMs", leaseMs));
            if (r.status() == 202) {
                acked.merge(requestId, Ack.QUEUED, FailoverLoad::stronger);
            } else if (r.status() == 200) {
                holder(lcid, requestId, r.body(), sent);
            }
            Thread.sleep(ThreadLocalRandom.current().nextInt(3));
        }
    }

    /**
     * Works on what it was granted (its own request, or a claim's), NEXT after NEXT, until
     * RELEASED or its lock was lost.
     */
    private void holder(String lcid, String working, JsonNode r, long sent) throws Exception {
        while (true) {
            acked.merge(working, Ack.ACTIVE, FailoverLoad::stronger);
            grants.computeIfAbsent(lcid, k -> java.util.Collections.synchronizedList(new ArrayList<>()))
                    .add(new Grant(r.get("fence").asLong(), sent, System.nanoTime()));
            Thread.sleep(ThreadLocalRandom.current().nextInt(3)); // the work
            sent = System.nanoTime();
            Answer c = call("/v1/locks/" + lcid + "/complete",
                    Map.of("token", r.get("token").asText(), "requestId", working));
            if (c.status() == 409) {
                lockLost.incrementAndGet(); // lease ran out during the outage: requeued, a claim takes it
                return;
            }
            if (c.status() != 200) {
                throw new AssertionError("complete answered " + c.status() + ": " + c.body());
            }
            acked.merge(working, Ack.DONE, FailoverLoad::stronger);
            r = c.body();
            if (!"NEXT".equals(r.get("status").asText())) {
                return;
            }
            working = r.get("request").get("requestId").asText();
        }
    }

    private static Ack stronger(Ack a, Ack b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    record Answer(int status, JsonNode body) {
    }

    /** Retried with the same body through 503s and connection failures; any other answer is returned. */
    private Answer call(String path, Map<String, Object> body) throws Exception {
        long until = System.nanoTime() + GIVE_UP_AFTER.toNanos();
        while (System.nanoTime() < until) {
            int status;
            String text;
            try {
                HttpResponse<String> response = http.send(HttpRequest.newBuilder(base.resolve(path))
                        .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(),
                        HttpResponse.BodyHandlers.ofString());
                status = response.statusCode();
                text = response.body();
            } catch (IOException e) {
                status = -1;
                text = e.toString();
            }
            if (status == 503 || status == -1) {
                long now = System.nanoTime();
                unavailable.incrementAndGet();
                first503.compareAndSet(0, now);
                last503.accumulateAndGet(now, Math::max);
                Thread.sleep(50 + ThreadLocalRandom.current().nextInt(50));
                continue;
            }
            answered.incrementAndGet();
            if (status < 300 && last503.get() != 0) {
                successAfterLast503.accumulateAndGet(System.nanoTime(), Math::max);
            }
            return new Answer(status, text.isEmpty() ? JSON.nullNode() : JSON.readTree(text));
        }
        throw new AssertionError("Baton did not heal within " + GIVE_UP_AFTER.toSeconds() + " s (" + path + ")");
    }

    /** Claims orphaned work (a holder whose lease ran out) and completes it, until none is left. */
    public void drain(Duration within) throws Exception {
        long until = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < until && !allDone()) {
            Answer claim = call("/v1/claims", Map.of("leaseMs", leaseMs));
            if (claim.status() == 200) {
                JsonNode r = claim.body();
                holder(r.get("lcid").asText(), r.get("request").get("requestId").asText(), r, System.nanoTime());
            } else {
                Thread.sleep(200); // leases still running
            }
        }
    }

    private boolean allDone() throws Exception {
        for (String lcid : lcids) {
            HttpResponse<String> view = get("/v1/locks/" + lcid);
            if (view.statusCode() != 200) {
                return false;
            }
            JsonNode lock = JSON.readTree(view.body());
            if (lock.get("held").asBoolean() || lock.get("queueLength").asInt() > 0) {
                return false;
            }
        }
        return true;
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** What a failover did to what Baton had acknowledged. */
    public record Report(int acknowledged, int lost, int revertedDone, int notProcessed, int dead, int fenceViolations,
            int grants, int unavailableAnswers, long unavailableMs, long healedAfterMs, int lockLost,
            Map<String, Integer> lostByAck) {

        @Override
        public String toString() {
            return String.format("acknowledged=%d lost=%d (of which DONE reverted=%d) by acknowledged state %s, "
                    + "not processed=%d, ended DEAD=%d, grants=%d fence violations=%d, 503/connection failures=%d over %d ms "
                    + "(first to last), lock lost during the outage=%d", acknowledged, lost, revertedDone, lostByAck,
                    notProcessed, dead, grants, fenceViolations, unavailableAnswers, unavailableMs, lockLost);
        }
    }

    /**
     * Looks up every acknowledged request: missing (404), or DONE before and not DONE now, is
     * lost; not DONE after the drain is not processed. Fences: a grant answered before another
     * was asked for must carry a smaller fence.
     */
    public Report verify() throws Exception {
        int lost = 0;
        int reverted = 0;
        int notProcessed = 0;
        int dead = 0;
        Map<String, Integer> lostByAck = new HashMap<>();
        for (Map.Entry<String, Ack> entry : acked.entrySet()) {
            String requestId = entry.getKey();
            HttpResponse<String> view = get("/v1/locks/" + lcidOf.get(requestId) + "/requests/" + requestId);
            if (view.statusCode() == 404) {
                lost++;
                lostByAck.merge(entry.getValue().name(), 1, Integer::sum);
                continue;
            }
            String state = JSON.readTree(view.body()).path("state").asText();
            if ("DEAD".equals(state) && entry.getValue() != Ack.DONE) {
                dead++; // ended: its attempts ran out (leases ran while Redis could not confirm); listed, retryable
            } else if (!"DONE".equals(state)) {
                if (entry.getValue() == Ack.DONE) {
                    lost++;
                    reverted++;
                    lostByAck.merge(entry.getValue().name(), 1, Integer::sum);
                } else {
                    notProcessed++;
                    if (notProcessed <= 5) {
                        String lcid = lcidOf.get(requestId);
                        System.out.println("failover load: not processed " + view.body() + " on " + lcid + ": "
                                + get("/v1/locks/" + lcid).body());
                    }
                }
            }
        }
        int violations = 0;
        int grantCount = 0;
        for (List<Grant> perLcid : grants.values()) {
            List<Grant> byAnswer = new ArrayList<>(perLcid);
            byAnswer.sort(Comparator.comparingLong(Grant::answeredNanos));
            List<Grant> bySent = new ArrayList<>(perLcid);
            bySent.sort(Comparator.comparingLong(Grant::sentNanos));
            grantCount += perLcid.size();
            long maxBefore = Long.MIN_VALUE;
            int i = 0;
            for (Grant grant : bySent) {
                while (i < byAnswer.size() && byAnswer.get(i).answeredNanos() < grant.sentNanos()) {
                    maxBefore = Math.max(maxBefore, byAnswer.get(i).fence());
                    i++;
                }
                if (grant.fence() <= maxBefore) {
                    violations++;
                }
            }
        }
        long window = first503.get() == 0 ? 0 : (last503.get() - first503.get()) / 1_000_000;
        long healed = last503.get() == 0 ? 0 : (successAfterLast503.get() - first503.get()) / 1_000_000;
        return new Report(acked.size(), lost, reverted, notProcessed, dead, violations, grantCount, unavailable.get(), window,
                healed, lockLost.get(), lostByAck);
    }

    public long first503Nanos() {
        return first503.get();
    }

    public long last503Nanos() {
        return last503.get();
    }

    /** Answers (any status but 503) so far: to see that the load is flowing. */
    public int answered() {
        return answered.get();
    }

    public long millisSinceStart() {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }
}
