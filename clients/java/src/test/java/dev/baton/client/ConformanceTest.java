package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The conformance scenarios of clients/conformance/scenarios.md, one test per id, against the real packaged
 * service on a real redis-server (started by clients/conformance/run java).
 */
class ConformanceTest {
    private final List<BatonClient> clients = new ArrayList<>();
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeAll
    static void needsTheHarness() {
        assumeTrue(Env.present(), "BATON_URL is not set: run through clients/conformance/run java");
    }

    @AfterEach
    void closeAll() {
        pool.shutdownNow();
        clients.forEach(BatonClient::close);
    }

    private BatonClient client() {
        BatonClient c = BatonClient.builder(Env.URL).apiKey(Env.API_KEY).build();
        clients.add(c);
        return c;
    }

    private static String lcid(String test, String name) {
        return Env.RUN + "-" + test + "-" + name;
    }

    private static Handler never(AtomicInteger counter) {
        return w -> {
            counter.incrementAndGet();
            return null;
        };
    }

    private static <T> T get(Future<T> f, int seconds) throws Exception {
        try {
            return f.get(seconds, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception ex) {
                throw ex;
            }
            throw e;
        }
    }

    private void assertDone(BatonClient c, String lcid, String... ids) {
        for (String id : ids) {
            assertEquals("DONE", c.request(lcid, id).state(), id + " done");
        }
    }

    private static void assertStrictlyIncreasing(List<Long> fences) {
        for (int i = 1; i < fences.size(); i++) {
            assertTrue(fences.get(i) > fences.get(i - 1), "fences strictly increase: " + fences);
        }
    }

    // ------------------------------------------------------------------------------------------------

    @Test
    @Timeout(60)
    void fifo_handoff() throws Exception {
        String l = lcid("fifo", "L");
        BatonClient h1 = client();
        BatonClient h2 = client();
        BatonClient h3 = client();
        CountDownLatch submitted = new CountDownLatch(1);
        List<String> seen = Collections.synchronizedList(new ArrayList<>());
        List<Long> fences = Collections.synchronizedList(new ArrayList<>());
        Future<RunReport> run1 = pool.submit(() -> h1.run(l, w -> {
            seen.add(w.request().requestId());
            fences.add(w.fence());
            if (w.request().requestId().equals("r1")) {
                assertTrue(submitted.await(30, TimeUnit.SECONDS));
            }
            return Map.of("by", "h1", "id", w.request().requestId());
        }, RunOptions.of("r1").payload(Map.of("n", 1))));
        Env.await("H1 holds the lock", Duration.ofSeconds(10), () -> h1.lock(l).held());

        AtomicInteger others = new AtomicInteger();
        int position = 1;
        for (String id : List.of("r2", "r3")) {
            RunReport r = h2.run(l, never(others), RunOptions.of(id).payload(Map.of("id", id)));
            assertEquals("QUEUED", r.status());
            assertEquals(position++, r.position());
            assertTrue(r.handled().isEmpty());
        }
        for (String id : List.of("r4", "r5")) {
            RunReport r = h3.run(l, never(others), RunOptions.of(id));
            assertEquals("QUEUED", r.status());
            assertEquals(position++, r.position());
        }
        submitted.countDown();

        RunReport report = get(run1, 30);
        List<String> expected = List.of("r1", "r2", "r3", "r4", "r5");
        assertEquals("RELEASED", report.status());
        assertEquals(expected, report.handled());
        assertEquals(expected, seen);
        assertStrictlyIncreasing(fences);
        assertEquals(0, others.get(), "H2's and H3's handlers never run");
        assertDone(h1, l, expected.toArray(String[]::new));
        assertEquals("h1", h1.request(l, "r4").result().get("by").asText());
        assertFalse(h1.lock(l).held());
    }

    @Test
    @Timeout(60)
    void long_handler_keeps_lock() throws Exception {
        String l = lcid("long", "L");
        BatonClient c = client();
        BatonClient watcher = client();
        List<LockView> views = new ArrayList<>();
        AtomicLong fence = new AtomicLong();
        RunReport r = c.run(l, w -> {
            fence.set(w.fence());
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3000);
            while (System.nanoTime() < end) {
                views.add(watcher.lock(l));
                Thread.sleep(150);
            }
            assertFalse(w.isCancelled());
            return "slow";
        }, RunOptions.of("r1").leaseMs(1000));
        assertEquals("RELEASED", r.status());
        assertEquals(List.of("r1"), r.handled());
        assertTrue(views.size() >= 10, "sampled the lock throughout: " + views.size());
        for (LockView v : views) {
            assertTrue(v.held(), "held throughout: " + v);
            assertEquals(fence.get(), v.fence(), "same fence throughout");
            assertEquals("r1", v.activeRequestId());
        }
        RequestView done = c.request(l, "r1");
        assertEquals("DONE", done.state());
        assertEquals(1, done.attempt());
        assertEquals("slow", done.result().asText());
    }

    @Test
    @Timeout(60)
    void throwing_handler_requeues() throws Exception {
        String l = lcid("throw", "L");
        BatonClient h1 = client();
        BatonClient other = client();
        BatonClient h2 = client();
        String message = "boom in r1 " + Env.RUN;
        CountDownLatch queued = new CountDownLatch(1);
        AtomicLong fence1 = new AtomicLong();
        Future<RunReport> run1 = pool.submit(() -> h1.run(l, w -> {
            fence1.set(w.fence());
            assertTrue(queued.await(30, TimeUnit.SECONDS));
            throw new IllegalStateException(message);
        }, RunOptions.of("r1")));
        Env.await("H1 holds the lock", Duration.ofSeconds(10), () -> h1.lock(l).held());
        AtomicInteger others = new AtomicInteger();
        assertEquals("QUEUED", other.run(l, never(others), RunOptions.of("r2")).status());
        queued.countDown();

        RunFailedException e = assertThrows(RunFailedException.class, () -> get(run1, 30));
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertEquals(message, e.getCause().getMessage());
        assertEquals("r1", e.report().requestId());
        assertEquals(List.of(), e.report().handled());

        RequestView v1 = h1.request(l, "r1");
        assertEquals("QUEUED", v1.state());
        assertEquals(1, v1.position());
        assertEquals(2, v1.attempt());
        assertEquals(message, v1.reason());

        List<String> ids = new ArrayList<>();
        List<Integer> attempts = new ArrayList<>();
        List<Long> fences = new ArrayList<>();
        RunReport r2 = h2.run(l, w -> {
            ids.add(w.request().requestId());
            attempts.add(w.request().attempt());
            fences.add(w.fence());
            return null;
        }, RunOptions.of("r3"));
        assertEquals("RELEASED", r2.status());
        assertEquals(List.of("r1", "r2", "r3"), ids);
        assertEquals(List.of("r1", "r2", "r3"), r2.handled());
        assertEquals(List.of(2, 1, 1), attempts);
        assertTrue(fences.get(0) > fence1.get(), "r1 redone under a higher fence");
        assertStrictlyIncreasing(fences);
        assertEquals(0, others.get());
        assertDone(h2, l, "r1", "r2", "r3");
    }

    @Test
    @Timeout(90)
    void sigkill_mid_handler() throws Exception {
        String l = lcid("sigkill", "L");
        BatonClient c = client();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // Surefire may run tests from a manifest-only jar: it keeps the real class path here.
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process p = new ProcessBuilder(java, "-cp", cp,
                KillableWorker.class.getName(), l, "r1", "1500").redirectErrorStream(true).start();
        long killedFence;
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
                try {
                    for (String s; (s = out.readLine()) != null; ) {
                        if (s.startsWith("IN_HANDLER")) {
                            return s;
                        }
                        System.out.println("worker: " + s);
                    }
                    return null;
                } catch (java.io.IOException e) {
                    return null;
                }
            }, pool);
            String in = line.get(60, TimeUnit.SECONDS);
            assertTrue(in != null && in.contains("fence="), "the worker reached its handler: " + in);
            killedFence = Long.parseLong(in.replaceAll(".*fence=(\\d+).*", "$1"));
        } finally {
            p.destroyForcibly(); // SIGKILL
            p.waitFor(10, TimeUnit.SECONDS);
        }
        assertEquals(137, p.exitValue(), "killed by SIGKILL");
        assertEquals("ACTIVE", c.request(l, "r1").state());
        Env.await("the killed worker's lease ran out", Duration.ofSeconds(10), () -> !c.lock(l).held());

        List<WorkItem> seen = new ArrayList<>();
        List<Long> fences = new ArrayList<>();
        RunReport r = c.run(l, w -> {
            seen.add(w.request());
            fences.add(w.fence());
            return "redone";
        }, RunOptions.of("r2"));
        assertEquals(List.of("r1", "r2"), r.handled());
        assertEquals("r1", seen.get(0).requestId());
        assertEquals(2, seen.get(0).attempt());
        assertTrue(fences.get(0) > killedFence, "higher fence than the killed worker's");
        assertEquals("r2", seen.get(1).requestId());
        assertDone(c, l, "r1", "r2");
    }

    /** Three holders on three lcids, 10 requests each, 10 s lease, 50 ms handlers, disrupted meanwhile. */
    private void runThroughDisruption(String test, String cmd, String... args) throws Exception {
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        CountDownLatch started = new CountDownLatch(3);
        List<Future<List<String>>> holders = new ArrayList<>();
        List<String> lcids = List.of(lcid(test, "A"), lcid(test, "B"), lcid(test, "C"));
        for (String l : lcids) {
            BatonClient c = client();
            holders.add(pool.submit(() -> {
                List<String> handled = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    RunReport r = c.run(l, w -> {
                        runs.computeIfAbsent(l + "/" + w.request().requestId(), k -> new AtomicInteger()).incrementAndGet();
                        Thread.sleep(50);
                        return i(w);
                    }, RunOptions.of("r" + i).leaseMs(10_000).payload(Map.of("i", i)));
                    assertEquals("RELEASED", r.status());
                    handled.addAll(r.handled());
                    if (i == 0) {
                        started.countDown();
                    }
                }
                return handled;
            }));
        }
        assertTrue(started.await(30, TimeUnit.SECONDS));
        CompletableFuture<Integer> disruption = Env.harness(cmd, args);
        for (Future<List<String>> h : holders) {
            assertEquals(10, get(h, 90).size());
        }
        assertEquals(0, disruption.get(60, TimeUnit.SECONDS), "the harness disruption succeeded");
        BatonClient check = client();
        for (String l : lcids) {
            for (int i = 0; i < 10; i++) {
                RequestView v = check.request(l, "r" + i);
                assertEquals("DONE", v.state(), l + "/r" + i);
                assertEquals(i, v.result().get("i").asInt());
                assertEquals(1, runs.get(l + "/r" + i).get(), "no handler runs twice for " + l + "/r" + i);
            }
        }
        assertEquals(30, runs.size());
    }

    private static Object i(Work w) {
        return Map.of("i", w.request().payload().get("i").asInt());
    }

    @Test
    @Timeout(150)
    void redis_stop_mid_run() throws Exception {
        runThroughDisruption("redisstop", "redis-stop", "3");
    }

    @Test
    @Timeout(150)
    void service_restart_mid_run() throws Exception {
        runThroughDisruption("restart", "service-restart");
    }

    @Test
    @Timeout(90)
    void lock_lost_cancels_handler() throws Exception {
        String l = lcid("lost", "L");
        BatonClient c = client();
        CountDownLatch inHandler = new CountDownLatch(1);
        AtomicLong cancelledAt = new AtomicLong();
        AtomicBoolean flagSeen = new AtomicBoolean();
        AtomicLong fence = new AtomicLong();
        Future<RunReport> run = pool.submit(() -> c.run(l, w -> {
            fence.set(w.fence());
            inHandler.countDown();
            try {
                Thread.sleep(10_000);
            } catch (InterruptedException e) {
                cancelledAt.set(System.nanoTime());
                flagSeen.set(w.isCancelled());
                throw e;
            }
            return "must not complete";
        }, RunOptions.of("r1").leaseMs(1000)));
        assertTrue(inHandler.await(10, TimeUnit.SECONDS));
        Thread.sleep(400); // a heartbeat or two went through
        long pausedAt = System.nanoTime();
        CompletableFuture<Integer> pause = Env.harness("redis-pause", "3");

        RunFailedException failed = assertThrows(RunFailedException.class, () -> get(run, 30));
        LockLostException e = assertInstanceOf(LockLostException.class, failed.getCause());
        assertTrue(cancelledAt.get() > 0, "the handler was interrupted");
        assertTrue(flagSeen.get(), "work.isCancelled() was true");
        long ms = TimeUnit.NANOSECONDS.toMillis(cancelledAt.get() - pausedAt);
        assertTrue(ms < 2500, "cancelled within about a lease: " + ms + " ms");
        // Redis is frozen: no heartbeat is answered, so the client decides at its own deadline (no HTTP status).
        assertEquals(e.byClient() ? 0 : 409, e.status(), e.getMessage());
        assertEquals(List.of(), failed.report().handled());
        assertEquals(0, pause.get(30, TimeUnit.SECONDS));

        RequestView v = c.request(l, "r1");
        assertNotEquals("DONE", v.state(), "the client never completed it");
        Env.await("the lease ran out", Duration.ofSeconds(10), () -> !c.lock(l).held());
        List<WorkItem> seen = new ArrayList<>();
        List<Long> fences = new ArrayList<>();
        RunReport r = client().run(l, w -> {
            seen.add(w.request());
            fences.add(w.fence());
            return null;
        }, RunOptions.of("r2"));
        assertEquals(List.of("r1", "r2"), r.handled());
        assertEquals(2, seen.get(0).attempt());
        assertTrue(fences.get(0) > fence.get());
        assertDone(c, l, "r1", "r2");
        assertNull(c.request(l, "r1").result());
    }

    @Test
    @Timeout(60)
    void batch_take_8() throws Exception {
        String l = lcid("batch", "L");
        BatonClient h = client();
        BatonClient submitter = client();
        CountDownLatch queued = new CountDownLatch(1);
        List<Integer> sizes = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        List<Long> fences = new ArrayList<>();
        Future<RunReport> run = pool.submit(() -> h.run(l, w -> {
            sizes.add(w.requests().size());
            fences.add(w.fence());
            w.requests().forEach(item -> ids.add(item.requestId()));
            if (w.request().requestId().equals("r0")) {
                assertTrue(queued.await(30, TimeUnit.SECONDS));
                return "res-r0";
            }
            Map<String, Object> results = new HashMap<>();
            w.requests().forEach(item -> results.put(item.requestId(), "res-" + item.requestId()));
            return results;
        }, RunOptions.of("r0").take(8)));
        Env.await("the holder holds r0", Duration.ofSeconds(10), () -> h.lock(l).held());
        AtomicInteger others = new AtomicInteger();
        List<String> expected = new ArrayList<>(List.of("r0"));
        for (int i = 1; i <= 20; i++) {
            assertEquals("QUEUED", submitter.run(l, never(others), RunOptions.of("r" + i)).status());
            expected.add("r" + i);
        }
        queued.countDown();
        RunReport r = get(run, 30);
        assertEquals(List.of(1, 8, 8, 4), sizes);
        assertEquals(expected, ids);
        assertEquals(expected, r.handled());
        assertStrictlyIncreasing(fences);
        assertEquals(0, others.get());
        for (String id : expected) {
            RequestView v = h.request(l, id);
            assertEquals("DONE", v.state(), id);
            assertEquals("res-" + id, v.result().asText());
        }
    }

    @Test
    @Timeout(60)
    void wait_turn_and_result() throws Exception {
        String l = lcid("wait", "L");
        BatonClient c1 = client();
        BatonClient c2 = client();
        BatonClient c3 = client();
        Turn w1 = c1.awaitTurn(l, "w1", Map.of("who", "w1"), 10_000, Duration.ofSeconds(10));
        AtomicLong turnAt = new AtomicLong();
        Future<Long> w2 = pool.submit(() -> {
            Turn t = c2.awaitTurn(l, "w2", Map.of("who", "w2"), 10_000, Duration.ofSeconds(40));
            turnAt.set(System.nanoTime());
            long f = t.fence();
            Outcome o = t.complete(Map.of("by", "w2", "fence", f));
            assertInstanceOf(Released.class, o);
            return f;
        });
        Env.await("w2 waits in the queue", Duration.ofSeconds(10), () -> {
            try {
                return "QUEUED".equals(c3.request(l, "w2").state());
            } catch (NotFoundException notYet) {
                return false;
            }
        });
        Future<RequestView> third = pool.submit(() -> c3.awaitResult(l, "w2", Duration.ofSeconds(40)));
        Thread.sleep(700);
        assertFalse(w2.isDone(), "W2 has no turn while W1 holds the lock");
        assertFalse(third.isDone());
        long completedAt = System.nanoTime();
        Outcome o1 = w1.complete(Map.of("by", "w1"));
        assertInstanceOf(Released.class, o1);
        assertEquals("w2", ((Released) o1).passedTo());

        long f2 = get(w2, 30);
        assertTrue(turnAt.get() > completedAt, "W2's turn came after W1 completed");
        assertTrue(f2 > w1.fence(), "higher fence");
        RequestView v = get(third, 30);
        assertEquals("DONE", v.state());
        JsonNode result = v.result();
        assertEquals("w2", result.get("by").asText());
        assertEquals(f2, result.get("fence").asLong());
        assertEquals("w1", c3.request(l, "w1").result().get("by").asText());
    }

    @Test
    @Timeout(60)
    void claim_poller_rescues_orphan() throws Exception {
        String prefix = Env.RUN + "-claim-";
        String l = prefix + "L";
        BatonClient raw = client();
        BatonClient poller = client();
        Acquired a = assertInstanceOf(Acquired.class, raw.acquire(l, AcquireRequest.of("o1").leaseMs(1000)));
        assertInstanceOf(Queued.class, raw.acquire(l, AcquireRequest.of("o2").payload("second")));
        // The raw holder goes away: no heartbeat, no complete.
        Map<String, Integer> attempts = new ConcurrentHashMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        Future<ClaimReport> running = pool.submit(() -> poller.runClaims(w -> {
            for (WorkItem item : w.requests()) {
                attempts.put(item.requestId(), item.attempt());
            }
            assertTrue(w.fence() > a.fence());
            return "claimed";
        }, ClaimOptions.defaults().lcidPrefix(prefix).leaseMs(5000).stop(stop::get)));
        Env.await("both requests done by the poller", Duration.ofSeconds(10), () ->
                "DONE".equals(raw.request(l, "o1").state()) && "DONE".equals(raw.request(l, "o2").state()));
        assertEquals(2, attempts.get("o1"));
        assertEquals(1, attempts.get("o2"));
        Thread.sleep(1500); // empty claims meanwhile: the poller must go on
        assertFalse(running.isDone(), "the poller keeps polling after a 204");
        stop.set(true);
        ClaimReport report = get(running, 10);
        assertEquals(2, report.handled());
        assertTrue(report.claims() >= 1);
        assertTrue(report.emptyPolls() >= 1, "it saw 204s and went on: " + report);
        assertEquals(0, report.failed());
        assertEquals("claimed", raw.request(l, "o1").result().asText());
    }

    @Test
    @Timeout(150)
    void lock_all_crossed_no_deadlock() throws Exception {
        String a = lcid("lockall", "A");
        String b = lcid("lockall", "B");
        Map<String, AtomicBoolean> busy = Map.of(a, new AtomicBoolean(), b, new AtomicBoolean());
        Map<String, Long> lastFence = new ConcurrentHashMap<>();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger badFences = new AtomicInteger();
        AtomicInteger missing = new AtomicInteger();
        int rounds = 200;
        List<Future<Integer>> callers = new ArrayList<>();
        for (List<String> order : List.of(List.of(a, b), List.of(b, a))) {
            BatonClient c = client();
            callers.add(pool.submit(() -> {
                int done = 0;
                for (int i = 0; i < rounds; i++) {
                    c.lockAll(order, set -> {
                        if (set.fences().size() != 2 || !set.fences().containsKey(a) || !set.fences().containsKey(b)) {
                            missing.incrementAndGet();
                        }
                        for (String l : List.of(a, b)) {
                            if (!busy.get(l).compareAndSet(false, true)) {
                                overlaps.incrementAndGet();
                            }
                        }
                        for (Map.Entry<String, Long> f : set.fences().entrySet()) {
                            Long prev = lastFence.put(f.getKey(), f.getValue());
                            if (prev != null && f.getValue() <= prev) {
                                badFences.incrementAndGet();
                            }
                        }
                        for (String l : List.of(a, b)) {
                            busy.get(l).set(false);
                        }
                        return null;
                    }, 10_000, Duration.ofSeconds(30));
                    done++;
                }
                return done;
            }));
        }
        long start = System.nanoTime();
        for (Future<Integer> f : callers) {
            assertEquals(rounds, get(f, 120));
        }
        long secs = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
        assertTrue(secs < 120, "both finished within 120 s: " + secs);
        assertEquals(0, overlaps.get(), "no round overlaps another on the same lcid");
        assertEquals(0, badFences.get(), "fences rise round after round");
        assertEquals(0, missing.get(), "a fence for both lcids in each round");
        BatonClient check = client();
        assertFalse(check.lock(a).held());
        assertFalse(check.lock(b).held());
    }

    @Test
    @Timeout(60)
    void requeued_request_rescued_by_poller() throws Exception {
        // A prefix of its own: this poller never takes another scenario's work.
        String prefix = Env.RUN + "-rescue-";
        String l = prefix + "L";
        BatonClient poller = client();
        BatonClient holder = client();
        AtomicBoolean stop = new AtomicBoolean();
        Map<String, Integer> attempts = new ConcurrentHashMap<>();
        List<BatonException> errors = Collections.synchronizedList(new ArrayList<>());
        // Started first, as every client README's first example does.
        Future<ClaimReport> running = pool.submit(() -> poller.runClaims(w -> {
            attempts.put(w.request().requestId(), w.request().attempt());
            return "rescued";
        }, ClaimOptions.defaults().lcidPrefix(prefix).leaseMs(5000).onError(errors::add).stop(stop::get)));
        String message = "first attempt fails " + Env.RUN;
        RunFailedException e = assertThrows(RunFailedException.class, () -> holder.run(l, w -> {
            if (w.request().attempt() == 1) {
                throw new IllegalStateException(message);
            }
            return "not by the holder";
        }, RunOptions.of("r1")));
        assertEquals(message, assertInstanceOf(IllegalStateException.class, e.getCause()).getMessage());
        assertEquals(List.of(), e.report().handled());
        assertFalse(e.report().handledOwn());
        assertEquals("r1", e.report().requestId());

        Env.await("the poller did r1", Duration.ofSeconds(10), () -> "DONE".equals(holder.request(l, "r1").state()));
        RequestView v = holder.request(l, "r1");
        assertEquals(2, v.attempt());
        assertEquals("rescued", v.result().asText());
        assertEquals(2, attempts.get("r1"));
        stop.set(true);
        ClaimReport report = get(running, 10);
        assertEquals(1, report.claims(), report.toString());
        assertEquals(1, report.handled(), report.toString());
        assertEquals(0, report.failed(), errors.toString());
    }

    @Test
    @Timeout(60)
    void released_before_own_request() throws Exception {
        String l = lcid("released", "L");
        BatonClient raw = client();
        BatonClient c = client();
        Acquired r0 = assertInstanceOf(Acquired.class, raw.acquire(l, AcquireRequest.of("r0").leaseMs(30_000)));
        assertInstanceOf(Queued.class, raw.acquire(l, AcquireRequest.of("h1")));
        assertInstanceOf(Queued.class, raw.acquire(l, AcquireRequest.of("w1").mode(AcquireRequest.WAIT)));
        raw.abort(l, r0.token(), "r0", false, "gone"); // no holder now, h1 at the head
        List<String> events = Collections.synchronizedList(new ArrayList<>());
        List<Outcome> outcomes = new ArrayList<>();
        RunReport r = c.run(l, w -> {
            events.add("handler " + w.request().requestId());
            return null;
        }, RunOptions.of("r2").onSubmit((lcid, rid, outcome) -> {
            events.add("onSubmit " + lcid + " " + rid);
            outcomes.add(outcome);
        }));
        assertEquals(List.of("onSubmit " + l + " r2", "handler h1"), events, "onSubmit once, before the handler");
        assertInstanceOf(Next.class, outcomes.get(0));
        assertEquals("RELEASED", r.status());
        assertEquals("w1", r.released().passedTo());
        assertEquals(List.of("h1"), r.handled());
        assertFalse(r.handledOwn(), "RELEASED, but r2 was not done");
        assertEquals("r2", r.requestId());
        assertEquals("QUEUED", c.request(l, "r2").state(), "done later, by whoever holds L next");
        assertDone(c, l, "h1");
    }

    @Test
    @Timeout(60)
    void turn_after_long_wait_is_live() throws Exception {
        String l = lcid("longwait", "L");
        BatonClient c1 = client();
        BatonClient c2 = client();
        Turn w1 = c1.awaitTurn(l, "w1", null, 10_000, Duration.ofSeconds(10));
        Future<Turn> w2 = pool.submit(() -> c2.awaitTurn(l, "w2", null, 1000, Duration.ofSeconds(30)));
        Env.await("w2 waits in the queue", Duration.ofSeconds(10), () -> {
            try {
                return "QUEUED".equals(c1.request(l, "w2").state());
            } catch (NotFoundException notYet) {
                return false;
            }
        });
        Thread.sleep(3000); // W1 holds its turn 3000 ms: W2's wait is three times its lease
        assertInstanceOf(Released.class, w1.complete(Map.of("by", "w1")));
        Turn t = get(w2, 30);
        assertFalse(t.isCancelled(), "returned live");
        assertEquals(1, t.attempt());
        assertTrue(t.fence() > w1.fence(), "higher fence than W1's");
        Thread.sleep(1500); // works longer than its lease: the heartbeats keep it
        assertFalse(t.isCancelled());
        assertInstanceOf(Released.class, t.complete(Map.of("by", "w2")));
        RequestView v = c2.request(l, "w2");
        assertEquals("DONE", v.state());
        assertEquals("w2", v.result().get("by").asText());
        assertEquals(1, v.attempt());
    }

    /** Not a scenario of scenarios.md: the trace context a request is submitted with comes back with it. */
    @Test
    @Timeout(60)
    @SuppressWarnings("try")
    void trace_context_travels_with_the_request() throws Exception {
        String l = lcid("trace", "L");
        String tp1 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        String tp2 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        InMemorySpanExporter exported = InMemorySpanExporter.create();
        GlobalOpenTelemetry.resetForTest();
        try (OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
                .addSpanProcessor(SimpleSpanProcessor.create(exported)).build()).buildAndRegisterGlobal()) {
            BatonClient h = client();
            BatonClient submitter = client();
            CountDownLatch queued = new CountDownLatch(1);
            Map<String, WorkItem> seen = new ConcurrentHashMap<>();
            Future<RunReport> run = pool.submit(() -> h.run(l, w -> {
                seen.put(w.request().requestId(), w.request());
                if (w.request().requestId().equals("r1")) {
                    assertTrue(queued.await(30, TimeUnit.SECONDS));
                }
                return null;
            }, RunOptions.of("r1").trace(TraceContext.of(tp1))));
            Env.await("the holder holds r1", Duration.ofSeconds(10), () -> h.lock(l).held());
            AtomicInteger others = new AtomicInteger();
            assertEquals("QUEUED", submitter.run(l, never(others), RunOptions.of("r2").trace(TraceContext.of(tp2, "vendor=x"))).status());
            Span caller = GlobalOpenTelemetry.getTracer("app").spanBuilder("caller").startSpan();
            try (Scope ignored = caller.makeCurrent()) {
                assertEquals("QUEUED", submitter.run(l, never(others), RunOptions.of("r3")).status());
            } finally {
                caller.end();
            }
            String tp3 = "00-" + caller.getSpanContext().getTraceId() + "-" + caller.getSpanContext().getSpanId() + "-01";
            assertEquals("QUEUED", submitter.run(l, never(others), RunOptions.of("r4")).status());
            assertEquals("QUEUED", submitter.run(l, never(others), RunOptions.of("r5").trace(TraceContext.of("00-nonsense-01", "v=1"))).status());
            RequestView waiting = submitter.request(l, "r2");
            assertEquals(tp2, waiting.traceparent());
            assertEquals("vendor=x", waiting.tracestate());
            queued.countDown();
            assertEquals(List.of("r1", "r2", "r3", "r4", "r5"), get(run, 30).handled());
            assertEquals(0, others.get());

            assertEquals(tp1, seen.get("r1").traceparent(), "the ACQUIRED of a fresh grant carries it");
            assertEquals(tp2, seen.get("r2").traceparent(), "NEXT carries it");
            assertEquals("vendor=x", seen.get("r2").tracestate());
            assertEquals(tp3, seen.get("r3").traceparent(), "the submitting call's current span");
            assertNull(seen.get("r4").traceparent());
            assertNull(seen.get("r5").traceparent(), "an invalid traceparent is ignored, not refused");
            assertNull(seen.get("r5").tracestate());
            assertEquals(tp2, h.request(l, "r2").traceparent(), "the request view keeps it after DONE");
            assertNull(h.request(l, "r4").traceparent());

            Map<String, List<String>> links = new HashMap<>();
            for (SpanData d : exported.getFinishedSpanItems()) {
                if (d.getName().equals("baton.work")) {
                    links.put(d.getAttributes().get(AttributeKey.stringKey("baton.request_id")), d.getLinks().stream()
                            .map(k -> "00-" + k.getSpanContext().getTraceId() + "-" + k.getSpanContext().getSpanId() + "-01").toList());
                }
            }
            assertEquals(Map.of("r1", List.of(tp1), "r2", List.of(tp2), "r3", List.of(tp3), "r4", List.of(), "r5", List.of()), links);
        } finally {
            GlobalOpenTelemetry.resetForTest();
        }
    }

    @Test
    @Timeout(30)
    void proxy_502_is_typed_error() throws Exception {
        String html = "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>";
        try (Stub proxy = new Stub(call -> new Stub.Reply(502, "text/html", html, Map.of(), 0));
             BatonClient c = BatonClient.builder(proxy.url()).apiKey("k").build()) {
            UnexpectedResponseException e = assertThrows(UnexpectedResponseException.class,
                    () -> c.acquire("proxy-L", AcquireRequest.of("r1")));
            assertEquals(502, e.status());
            assertEquals(html, e.bodyText());
            assertTrue(e.getMessage().contains("502"));
            assertEquals(1, proxy.calls.size(), "not retried");
            assertThrows(UnexpectedResponseException.class, () -> c.lock("proxy-L"));
            assertEquals(2, proxy.calls.size());
        } catch (AssertionError e) {
            throw e;
        } catch (Exception e) {
            fail("a typed error, not " + e);
        }
    }
}
