package dev.baton.client;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Wait mode as clients/README.md ("Wait mode") has it: a turn is live when returned, a wait keeps its place unless
 * the caller gives up, work nobody holds is reported, lockAll gives up as a whole. Against the local stub.
 */
class WaitTest {
    private static final String RELEASED = RunTest.RELEASED;
    private static final String QUEUED = "{\"status\":\"QUEUED\",\"lcid\":\"L\",\"requestId\":\"w\",\"position\":1,\"queueLength\":2}";

    private static String turn(int leaseMs, Integer attempt) {
        return "{\"status\":\"ACQUIRED\",\"lcid\":\"L\",\"requestId\":\"w\",\"token\":\"tok\",\"fence\":5,\"leaseMs\":" + leaseMs
                + (attempt == null ? "" : ",\"attempt\":" + attempt) + "}";
    }

    private static Stub.Reply delayed(String body, long ms) {
        return new Stub.Reply(200, "application/json", body, Map.of(), ms);
    }

    private static BatonClient client(Stub s, long deadlineMs) {
        return RunTest.client(s, deadlineMs);
    }

    @Test
    @Timeout(20)
    void a_turn_picked_up_after_a_wait_longer_than_its_lease_is_renewed_and_live() throws Exception {
        AtomicInteger heartbeatsBeforeReturn = new AtomicInteger(-1);
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire") ? delayed(turn(600, 3), 900) // held 1.5 leases
                : c.path().endsWith("/heartbeat") ? Stub.Reply.json(200, turn(600, null)) : Stub.Reply.json(200, RELEASED));
             BatonClient c = client(s, 2000)) {
            Turn t = c.awaitTurn("L", "w", null, 600, Duration.ofSeconds(10));
            heartbeatsBeforeReturn.set((int) s.count("/heartbeat"));
            assertEquals(1, heartbeatsBeforeReturn.get(), "renewed at once, before the turn was returned");
            assertFalse(t.isCancelled(), "live when returned");
            assertEquals(3, t.attempt(), "attempt from ACQUIRED");
            Thread.sleep(700); // longer than the lease: the background heartbeats keep it
            assertFalse(t.isCancelled());
            assertInstanceOf(Released.class, t.complete(Map.of("ok", true)));
            assertEquals(1, s.count("/complete"), "the complete went out");
        }
    }

    @Test
    @Timeout(20)
    void the_first_attempt_counts_when_a_retry_got_the_turn() throws Exception {
        AtomicInteger acquires = new AtomicInteger();
        // The first attempt's answer is a 503 after 300 ms: more than a third of the 600 ms lease has passed since
        // the first send when the retry gets the turn at once.
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire")
                ? (acquires.getAndIncrement() == 0 ? new Stub.Reply(503, "application/problem+json",
                "{\"code\":\"BACKEND_UNAVAILABLE\",\"status\":503}", Map.of("Retry-After", "0"), 300) : Stub.Reply.json(200, turn(600, 1)))
                : c.path().endsWith("/heartbeat") ? Stub.Reply.json(200, turn(600, null)) : Stub.Reply.json(200, RELEASED));
             BatonClient c = client(s, 2000)) {
            Turn t = c.awaitTurn("L", "w", null, 600, Duration.ofSeconds(10));
            assertEquals(1, s.count("/heartbeat"), "renewed before it was returned");
            assertEquals(2, acquires.get());
            t.complete(null);
        }
    }

    @Test
    @Timeout(20)
    void a_turn_picked_up_at_once_is_returned_without_a_renewal() throws Exception {
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire") ? Stub.Reply.json(200, turn(30_000, null))
                : Stub.Reply.json(200, RELEASED)); BatonClient c = client(s, 2000)) {
            Turn t = c.awaitTurn("L", "w", null, 30_000, Duration.ofSeconds(10));
            assertEquals(0, s.count("/heartbeat"));
            assertEquals(1, t.attempt(), "1 when the service sends no attempt");
            t.complete(null);
        }
    }

    @Test
    @Timeout(20)
    void a_renewal_that_answers_lock_lost_is_lock_lost() throws Exception {
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire") ? delayed(turn(600, 1), 900)
                : c.path().endsWith("/heartbeat") ? Stub.Reply.problem(409, "LOCK_LOST", null) : Stub.Reply.json(200, RELEASED));
             BatonClient c = client(s, 2000)) {
            LockLostException e = assertThrows(LockLostException.class, () -> c.awaitTurn("L", "w", null, 600, Duration.ofSeconds(10)));
            assertFalse(e.byClient());
            assertEquals(0, s.count("/abort"), "nothing to withdraw: the request is not queued");
        }
    }

    @Test
    @Timeout(20)
    void a_failed_call_keeps_the_wait_in_its_place() throws Exception {
        try (Stub s = new Stub(c -> Stub.Reply.problem(503, "BACKEND_UNAVAILABLE", "0")); BatonClient c = client(s, 1000)) {
            assertThrows(BackendUnavailableException.class, () -> c.awaitTurn("L", "w", null, 1000, Duration.ofMillis(1500)));
            assertEquals(0, s.count("/abort"), "not withdrawn after the retry deadline");
        }
        try (Stub s = new Stub(c -> new Stub.Reply(502, "text/html", "<h1>bad gateway</h1>", Map.of(), 0));
             BatonClient c = client(s, 1000)) {
            assertThrows(UnexpectedResponseException.class, () -> c.awaitTurn("L", "w", null, 1000, Duration.ofSeconds(5)));
            assertEquals(0, s.count("/abort"), "not withdrawn after an unexpected answer");
        }
    }

    @Test
    @Timeout(20)
    void a_wait_is_withdrawn_when_its_timeout_runs_out() throws Exception {
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire") ? delayed(QUEUED, 50)
                : c.path().endsWith("/abort") ? Stub.Reply.json(200, RELEASED)
                : Stub.Reply.json(200, "{\"lcid\":\"L\",\"held\":true,\"queueLength\":1}"));
             BatonClient c = client(s, 2000)) {
            assertThrows(BatonTimeoutException.class, () -> c.awaitTurn("L", "w", null, 1000, Duration.ofMillis(300)));
            Stub.Call withdraw = s.calls.stream().filter(x -> x.path().endsWith("/abort")).findFirst().orElseThrow();
            assertEquals("{\"requestId\":\"w\",\"reason\":\"awaitTurn timed out\"}", withdraw.body());
        }
    }

    @Test
    @Timeout(20)
    void a_wait_is_withdrawn_when_the_caller_interrupts_it() throws Exception {
        CountDownLatch polling = new CountDownLatch(1);
        try (Stub s = new Stub(c -> {
            if (c.path().endsWith("/acquire")) {
                polling.countDown();
                return delayed(QUEUED, 5000);
            }
            return Stub.Reply.json(200, RELEASED);
        }); BatonClient c = client(s, 2000)) {
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread waiter = new Thread(() -> {
                try {
                    c.awaitTurn("L", "w", null, 1000, Duration.ofSeconds(30));
                } catch (Throwable e) {
                    thrown.set(e);
                }
            });
            waiter.start();
            assertTrue(polling.await(5, TimeUnit.SECONDS));
            waiter.interrupt();
            waiter.join(5000);
            assertFalse(waiter.isAlive());
            assertTrue(assertInstanceOf(BatonTransportException.class, thrown.get()).interrupted());
            assertEquals(1, s.count("/abort"), "withdrawn: the caller gave up");
        }
    }

    @Test
    @Timeout(20)
    void work_nobody_holds_is_reported_once_per_wait() throws Exception {
        AtomicInteger acquires = new AtomicInteger();
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire")
                ? (acquires.getAndIncrement() < 4 ? Stub.Reply.json(202, QUEUED) : Stub.Reply.json(200, turn(30_000, 1)))
                : c.path().equals("/v1/locks/L") ? Stub.Reply.json(200, "{\"lcid\":\"L\",\"held\":false,\"fence\":4,\"queueLength\":2,\"leaseRemainingMs\":0}")
                : Stub.Reply.json(200, RELEASED));
             BatonClient c = client(s, 2000); LogCapture log = new LogCapture()) {
            Turn t = c.awaitTurn("L", "w", null, 30_000, Duration.ofSeconds(10));
            List<String> warned = log.warnings("nobody holds");
            assertEquals(1, warned.size(), "one warning for the wait, after two reads in a row: " + log.all());
            assertTrue(warned.get(0).contains("L") && warned.get(0).contains("claims-and-dead-letters.md#who-rescues-what"),
                    warned.get(0));
            assertEquals(5, acquires.get(), "the wait went on");
            t.complete(null);
        }
    }

    @Test
    @Timeout(20)
    void a_queue_that_has_a_holder_between_reads_is_not_reported() throws Exception {
        AtomicInteger acquires = new AtomicInteger();
        AtomicInteger views = new AtomicInteger();
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire")
                ? (acquires.getAndIncrement() < 4 ? Stub.Reply.json(202, QUEUED) : Stub.Reply.json(200, turn(30_000, 1)))
                : c.path().equals("/v1/locks/L") ? Stub.Reply.json(200, "{\"lcid\":\"L\",\"held\":" + (views.getAndIncrement() % 2 == 1)
                + ",\"queueLength\":2,\"leaseRemainingMs\":0}")
                : Stub.Reply.json(200, RELEASED));
             BatonClient c = client(s, 2000); LogCapture log = new LogCapture()) {
            c.awaitTurn("L", "w", null, 30_000, Duration.ofSeconds(10)).complete(null);
            assertEquals(4, views.get(), "the lock view was read after each QUEUED");
            assertEquals(List.of(), log.warnings("nobody holds"), "never twice in a row");
        }
    }

    @Test
    @Timeout(20)
    void lock_all_gives_up_as_a_whole_on_a_failed_call() throws Exception {
        try (Stub s = new Stub(c -> {
            if (c.path().equals("/v1/locks/a/acquire")) {
                return Stub.Reply.json(200, "{\"status\":\"ACQUIRED\",\"lcid\":\"a\",\"requestId\":\"x\",\"token\":\"tok-a\",\"fence\":1,\"leaseMs\":30000}");
            }
            if (c.path().equals("/v1/locks/b/acquire")) {
                return Stub.Reply.problem(503, "BACKEND_UNAVAILABLE", "0");
            }
            return Stub.Reply.json(200, RELEASED);
        }); BatonClient c = client(s, 1000)) {
            AtomicInteger handlers = new AtomicInteger();
            BatonException e = assertThrows(BatonException.class, () -> c.lockAll(List.of("b", "a"), set -> handlers.incrementAndGet(),
                    30_000, Duration.ofMillis(1500)));
            assertInstanceOf(BackendUnavailableException.class, e, e.toString());
            assertEquals(0, handlers.get());
            List<String> aborts = s.calls.stream().filter(x -> x.path().endsWith("/abort")).map(x -> x.path() + " " + x.body()).toList();
            assertEquals(2, aborts.size(), "the turn held aborted, the wait withdrawn: " + aborts);
            assertTrue(aborts.stream().anyMatch(x -> x.startsWith("/v1/locks/a/abort") && x.contains("\"token\":\"tok-a\"")), aborts.toString());
            assertTrue(aborts.stream().anyMatch(x -> x.startsWith("/v1/locks/b/abort") && !x.contains("token")), aborts.toString());
        }
    }
}
