package dev.baton.client;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Retrying is not silent, and a transport error names the host and port it could not reach. */
class TransportTest {
    private static int freePort() throws Exception {
        try (ServerSocket ss = new ServerSocket(0)) {
            return ss.getLocalPort();
        }
    }

    @Test
    @Timeout(20)
    void one_warning_per_call_after_its_third_failed_attempt() throws Exception {
        try (Stub s = new Stub(c -> Stub.Reply.problem(503, "BACKEND_UNAVAILABLE", "0"));
             BatonClient c = RunTest.client(s, 800); LogCapture log = new LogCapture()) {
            assertThrows(BackendUnavailableException.class, () -> c.acquire("L", AcquireRequest.of("r1")));
            assertTrue(s.calls.size() > 3, "went on after the warning: " + s.calls.size());
            List<String> warned = log.warnings("failed 3 times");
            assertEquals(1, warned.size(), "one warning for the call: " + log.all());
            String w = warned.get(0);
            String port = s.url().substring(s.url().lastIndexOf(':') + 1);
            assertTrue(w.contains("POST /v1/locks/L/acquire"), w);
            assertTrue(w.contains("127.0.0.1:" + port), w);
            assertTrue(w.contains("503 BACKEND_UNAVAILABLE"), "the last error: " + w);
            assertTrue(w.contains("until its deadline"), w);
            assertFalse(w.contains("secret"), "never the key");
            assertFalse(log.all().stream().anyMatch(m -> m.contains("secret")), "never the key, anywhere");
        }
    }

    @Test
    @Timeout(20)
    void a_call_that_succeeds_by_its_third_attempt_does_not_warn() throws Exception {
        AtomicInteger n = new AtomicInteger();
        try (Stub s = new Stub(c -> n.getAndIncrement() < 2 ? Stub.Reply.problem(503, "BACKEND_UNAVAILABLE", "0")
                : Stub.Reply.json(200, RunTest.RELEASED)); BatonClient c = RunTest.client(s, 2000); LogCapture log = new LogCapture()) {
            c.abort("L", "tok", "r1", false, null);
            assertEquals(3, s.calls.size());
            assertEquals(List.of(), log.warnings("failed"));
        }
    }

    @Test
    @Timeout(20)
    void connection_refused_names_host_and_port_and_warns_within_a_second() throws Exception {
        int port = freePort();
        // The default policy: retried for 30 s; the warning after the third attempt tells of the wrong URL at once.
        try (BatonClient c = BatonClient.builder("http://127.0.0.1:" + port).build(); LogCapture log = new LogCapture()) {
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            long t0 = System.nanoTime();
            Thread caller = new Thread(() -> {
                try {
                    c.lock("L");
                } catch (Throwable e) {
                    thrown.set(e);
                }
            });
            caller.start();
            Env.await("the retry warning", Duration.ofSeconds(5), () -> !log.warnings("failed 3 times").isEmpty());
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            String w = log.warnings("failed 3 times").get(0);
            assertTrue(w.contains("connection refused: 127.0.0.1:" + port), w);
            assertTrue(w.contains("GET /v1/locks/L"), w);
            assertTrue(ms < 1500, "seen in the first second, not after the deadline: " + ms + " ms");
            caller.interrupt();
            caller.join(5000);
            assertTrue(assertInstanceOf(BatonTransportException.class, thrown.get()).interrupted());
        }
        try (BatonClient c = BatonClient.builder("http://127.0.0.1:" + port).retryPolicy(RetryPolicy.NONE).build()) {
            BatonTransportException e = assertThrows(BatonTransportException.class, () -> c.lock("L"));
            assertTrue(e.getMessage().startsWith("connection refused: 127.0.0.1:" + port), e.getMessage());
            assertEquals("127.0.0.1", e.host());
            assertEquals(port, e.port());
            assertFalse(e.interrupted());
        }
    }

    @Test
    @Timeout(20)
    void a_timeout_names_host_and_port() throws Exception {
        try (Stub s = new Stub(c -> new Stub.Reply(200, "application/json", RunTest.RELEASED, java.util.Map.of(), 1500));
             BatonClient c = BatonClient.builder(s.url()).callTimeout(Duration.ofMillis(200)).retryPolicy(RetryPolicy.NONE).build()) {
            BatonTransportException e = assertThrows(BatonTransportException.class, () -> c.lock("L"));
            String port = s.url().substring(s.url().lastIndexOf(':') + 1);
            assertTrue(e.getMessage().contains("no answer within 200 ms: 127.0.0.1:" + port), e.getMessage());
        }
    }
}
