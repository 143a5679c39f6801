package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Unit tests: transport behaviour against a local stub (never Baton's logic), and pure functions. */
class ClientUnitTest {
    private static final String ACQUIRED = "{\"status\":\"ACQUIRED\",\"lcid\":\"L\",\"requestId\":\"r1\",\"token\":\"tok\","
            + "\"fence\":1799999999999999,\"leaseMs\":600,\"expiresAt\":\"2026-12-02T13:27:48.074Z\",\"newField\":{\"x\":1}}";
    private static final String RELEASED = "{\"status\":\"RELEASED\",\"lcid\":\"L\",\"pending\":0}";

    private static BatonClient client(Stub s, RetryPolicy p) {
        return BatonClient.builder(s.url()).apiKey("secret").retryPolicy(p).callTimeout(Duration.ofMillis(2000)).build();
    }

    private static RetryPolicy fast(long deadlineMs) {
        return new RetryPolicy(Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofMillis(deadlineMs));
    }

    @Test
    void retries_503_no_sooner_than_retry_after_with_the_same_body() throws Exception {
        AtomicInteger n = new AtomicInteger();
        try (Stub s = new Stub(c -> n.getAndIncrement() == 0 ? Stub.Reply.problem(503, "BACKEND_UNAVAILABLE", "1")
                : Stub.Reply.json(200, ACQUIRED)); BatonClient c = client(s, fast(5000))) {
            long t0 = System.nanoTime();
            Outcome o = c.acquire("L", AcquireRequest.of("r1").payload(Map.of("a", 1)));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            Acquired a = assertInstanceOf(Acquired.class, o);
            assertEquals(1799999999999999L, a.fence());
            assertEquals("tok", a.token());
            assertTrue(ms >= 1000, "waited Retry-After: " + ms);
            assertEquals(2, s.calls.size());
            assertEquals(s.calls.get(0).body(), s.calls.get(1).body());
            assertEquals("Bearer secret", s.calls.get(0).headers().get("Authorization").get(0));
            assertFalse(a.toString().contains("tok"), "toString never shows the token");
        }
    }

    @Test
    void retries_429_and_500() throws Exception {
        AtomicInteger n = new AtomicInteger();
        try (Stub s = new Stub(c -> switch (n.getAndIncrement()) {
            case 0 -> Stub.Reply.problem(429, "QUEUE_FULL", "0");
            case 1 -> Stub.Reply.problem(500, "INTERNAL_ERROR", null);
            default -> Stub.Reply.json(202, "{\"status\":\"QUEUED\",\"lcid\":\"L\",\"requestId\":\"r1\",\"position\":3,\"queueLength\":3}");
        }); BatonClient c = client(s, fast(5000))) {
            Queued q = assertInstanceOf(Queued.class, c.acquire("L", AcquireRequest.of("r1")));
            assertEquals(3, q.position());
            assertEquals(3, s.calls.size());
        }
    }

    @Test
    void never_retries_other_4xx_and_types_them() throws Exception {
        String invalid = "{\"type\":\"urn:baton:problem:invalid-request\",\"title\":\"Invalid request\",\"status\":400,"
                + "\"code\":\"INVALID_REQUEST\",\"detail\":\"unknown field 'leaseMS'\",\"instance\":\"/v1/locks/L/acquire\",\"field\":\"leaseMS\"}";
        try (Stub s = new Stub(c -> new Stub.Reply(400, "application/problem+json", invalid, Map.of(), 0));
             BatonClient c = client(s, fast(5000))) {
            InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> c.acquire("L", AcquireRequest.of("r1")));
            assertEquals("INVALID_REQUEST", e.code());
            assertEquals(400, e.status());
            assertEquals("leaseMS", e.field());
            assertEquals("urn:baton:problem:invalid-request", e.type());
            assertEquals("Invalid request", e.title());
            assertEquals("unknown field 'leaseMS'", e.detail());
            assertEquals("/v1/locks/L/acquire", e.body().get("instance").asText());
            assertEquals(1, s.calls.size());
        }
    }

    @Test
    void problem_codes_map_to_their_types() {
        String[][] cases = {
                {"LOCK_LOST", "409"}, {"DUPLICATE_REQUEST", "409"}, {"BATCH_MISMATCH", "409"}, {"NOT_QUEUED", "409"},
                {"NOT_DEAD", "409"}, {"NOT_FOUND", "404"}, {"QUEUE_FULL", "429"}, {"UNAUTHORIZED", "401"},
                {"FORBIDDEN", "403"}, {"PAYLOAD_TOO_LARGE", "413"}, {"BACKEND_UNAVAILABLE", "503"},
                {"INTERNAL_ERROR", "500"}, {"NOT_ACCEPTABLE", "406"}};
        List<Class<?>> types = List.of(LockLostException.class, DuplicateRequestException.class,
                BatchMismatchException.class, NotQueuedException.class, NotDeadException.class, NotFoundException.class,
                QueueFullException.class, UnauthorizedException.class, ForbiddenException.class,
                PayloadTooLargeException.class, BackendUnavailableException.class, InternalErrorException.class,
                BatonProblemException.class);
        for (int i = 0; i < cases.length; i++) {
            int status = Integer.parseInt(cases[i][1]);
            String body = "{\"code\":\"" + cases[i][0] + "\",\"status\":" + status + ",\"state\":\"DONE\",\"attempt\":2,"
                    + "\"result\":{\"ok\":true},\"activeRequestIds\":[\"a\",\"b\"]}";
            BatonProblemException p = Http.problem(status, "application/problem+json", body, 0);
            assertEquals(types.get(i), p.getClass(), cases[i][0]);
            assertEquals(cases[i][0], p.code());
            assertEquals("DONE", p.state());
            assertEquals(2, p.attempt());
        }
        DuplicateRequestException d = (DuplicateRequestException) Http.problem(409, "application/problem+json",
                "{\"code\":\"DUPLICATE_REQUEST\",\"state\":\"DONE\",\"result\":{\"ok\":true}}", 0);
        assertTrue(d.result().get("ok").asBoolean());
        BatchMismatchException b = (BatchMismatchException) Http.problem(409, "application/problem+json",
                "{\"code\":\"BATCH_MISMATCH\",\"activeRequestIds\":[\"a\",\"b\"]}", 0);
        assertEquals(List.of("a", "b"), b.activeRequestIds());
    }

    @Test
    void gives_up_at_the_deadline_with_the_last_error() throws Exception {
        try (Stub s = new Stub(c -> Stub.Reply.problem(503, "BACKEND_UNAVAILABLE", null)); BatonClient c = client(s, fast(600))) {
            long t0 = System.nanoTime();
            BatonException thrown = assertThrows(BatonException.class, () -> c.lock("L"));
            BackendUnavailableException e = assertInstanceOf(BackendUnavailableException.class, thrown, thrown.toString());
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms < 1500, "bounded by the deadline: " + ms);
            assertTrue(s.calls.size() >= 2, "retried: " + s.calls.size());
            assertEquals(503, e.status());
        }
    }

    @Test
    void retry_after_beyond_the_deadline_gives_up_at_once() throws Exception {
        try (Stub s = new Stub(c -> Stub.Reply.problem(429, "QUEUE_FULL", "5")); BatonClient c = client(s, fast(1000))) {
            long t0 = System.nanoTime();
            QueueFullException e = assertThrows(QueueFullException.class, () -> c.acquire("L", AcquireRequest.of("r")));
            assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) < 900);
            assertEquals(5000, e.retryAfterMs());
            assertEquals(1, s.calls.size());
        }
    }

    @Test
    void connection_refused_is_a_transport_error_after_retries() throws Exception {
        int port;
        try (ServerSocket ss = new ServerSocket(0)) {
            port = ss.getLocalPort();
        }
        try (BatonClient c = BatonClient.builder("http://127.0.0.1:" + port).retryPolicy(fast(400)).build()) {
            BatonTransportException e = assertThrows(BatonTransportException.class, () -> c.lock("L"));
            assertFalse(e.interrupted());
        }
    }

    @Test
    void a_timeout_is_retried() throws Exception {
        AtomicInteger n = new AtomicInteger();
        try (Stub s = new Stub(c -> n.getAndIncrement() == 0 ? new Stub.Reply(200, "application/json", RELEASED, Map.of(), 3000)
                : Stub.Reply.json(200, RELEASED));
             BatonClient c = BatonClient.builder(s.url()).retryPolicy(fast(5000)).callTimeout(Duration.ofMillis(1000)).build()) {
            Released r = c.abort("L", "tok", "r1", false, null);
            assertEquals(0, r.pending());
            assertEquals(2, n.get());
        }
    }

    @Test
    void non_json_success_is_an_unexpected_response() throws Exception {
        try (Stub s = new Stub(c -> new Stub.Reply(200, "text/plain", "hello", Map.of(), 0)); BatonClient c = client(s, fast(1000))) {
            UnexpectedResponseException e = assertThrows(UnexpectedResponseException.class, () -> c.lock("L"));
            assertEquals(200, e.status());
            assertEquals("hello", e.bodyText());
            assertEquals(1, s.calls.size());
        }
    }

    @Test
    void a_503_that_is_not_a_problem_is_not_retried() throws Exception {
        try (Stub s = new Stub(c -> new Stub.Reply(503, "text/html", "<h1>down</h1>", Map.of(), 0)); BatonClient c = client(s, fast(2000))) {
            UnexpectedResponseException e = assertThrows(UnexpectedResponseException.class, () -> c.lock("L"));
            assertEquals(503, e.status());
            assertEquals(1, s.calls.size());
        }
    }

    @Test
    void bodies_carry_only_the_fields_set() throws Exception {
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire") ? Stub.Reply.json(200, ACQUIRED)
                : c.path().startsWith("/v1/claims") ? new Stub.Reply(204, null, "", Map.of(), 0) : Stub.Reply.json(200, RELEASED));
             BatonClient c = client(s, fast(1000))) {
            c.acquire("L", AcquireRequest.of("r1"));
            c.acquire("L", AcquireRequest.of("r2").payload(Map.of("k", "v")).leaseMs(1000).mode("wait").waitMs(5).take(3));
            c.complete("L", "tok", "r1", null);
            c.complete("L", "tok", List.of(new Completion("a", 1), new Completion("b", null)), 8);
            c.abort("L", "tok", "r1", true, "x".repeat(2000));
            c.withdraw("L", "r2", null);
            assertTrue(c.claim(ClaimOptions.defaults()).isEmpty());
            JsonNode[] b = s.calls.stream().map(x -> read(x.body())).toArray(JsonNode[]::new);
            assertEquals("{\"requestId\":\"r1\"}", b[0].toString());
            assertEquals("{\"requestId\":\"r2\",\"payload\":{\"k\":\"v\"},\"leaseMs\":1000,\"mode\":\"wait\",\"waitMs\":5,\"take\":3}",
                    b[1].toString());
            assertEquals("{\"token\":\"tok\",\"requestId\":\"r1\"}", b[2].toString());
            assertEquals("{\"token\":\"tok\",\"completed\":[{\"requestId\":\"a\",\"result\":1},{\"requestId\":\"b\"}],\"take\":8}",
                    b[3].toString());
            assertEquals(1024, b[4].get("reason").asText().length(), "reason cut to 1024 characters");
            assertTrue(b[4].get("requeue").asBoolean());
            assertEquals("{\"requestId\":\"r2\"}", b[5].toString());
            assertEquals("{}", b[6].toString());
            assertEquals("application/json", s.calls.get(0).headers().get("Content-Type").get(0));
        }
    }

    private static JsonNode read(String s) {
        try {
            return BatonClient.mapper().readTree(s);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void parses_outcomes_ignoring_unknown_fields() {
        Outcome n = Calls.parseOutcome(new Http.Resp(200, "application/json",
                "{\"status\":\"NEXT\",\"lcid\":\"L\",\"token\":\"t\",\"fence\":9007199254740991,\"leaseMs\":1000,"
                        + "\"expiresAt\":\"x\",\"request\":{\"requestId\":\"a\",\"attempt\":2},"
                        + "\"requests\":[{\"requestId\":\"a\",\"attempt\":2},{\"requestId\":\"b\",\"payload\":[1],\"attempt\":1}],\"extra\":1}"));
        Next next = assertInstanceOf(Next.class, n);
        assertEquals(9007199254740991L, next.fence());
        assertEquals(2, next.requests().size());
        assertNull(next.requests().get(0).payload());
        assertEquals(1, next.requests().get(1).payload().get(0).asInt());
        Outcome v1 = Calls.parseOutcome(new Http.Resp(200, "application/json",
                "{\"status\":\"NEXT\",\"lcid\":\"L\",\"token\":\"t\",\"fence\":3,\"leaseMs\":1000,\"request\":{\"requestId\":\"a\",\"attempt\":1}}"));
        assertEquals(List.of("a"), ((Next) v1).requests().stream().map(WorkItem::requestId).toList());
        Released r = assertInstanceOf(Released.class, Calls.parseOutcome(new Http.Resp(200, "application/json",
                "{\"status\":\"RELEASED\",\"lcid\":\"L\",\"pending\":2,\"passedTo\":\"w\"}")));
        assertEquals(2, r.pending());
        assertEquals("w", r.passedTo());
        assertThrows(UnexpectedResponseException.class, () -> Calls.parseOutcome(
                new Http.Resp(200, "application/json", "{\"status\":\"WEIRD\"}")));
    }

    private static final String TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    @Test
    void parses_trace_context_fields_and_null_when_absent() throws Exception {
        Acquired a = assertInstanceOf(Acquired.class, Calls.parseOutcome(new Http.Resp(200, "application/json",
                "{\"status\":\"ACQUIRED\",\"lcid\":\"L\",\"requestId\":\"r1\",\"token\":\"t\",\"fence\":1,\"leaseMs\":1000,"
                        + "\"traceparent\":\"" + TP + "\",\"tracestate\":\"vendor=x\"}")));
        assertEquals(TP, a.traceparent());
        assertEquals("vendor=x", a.tracestate());
        Acquired plain = assertInstanceOf(Acquired.class, Calls.parseOutcome(new Http.Resp(200, "application/json", ACQUIRED)));
        assertNull(plain.traceparent());
        assertNull(plain.tracestate());
        assertEquals(1, plain.attempt(), "no attempt (a service before protocol v1.2): 1");
        Acquired redone = assertInstanceOf(Acquired.class, Calls.parseOutcome(new Http.Resp(200, "application/json",
                "{\"status\":\"ACQUIRED\",\"lcid\":\"L\",\"requestId\":\"r1\",\"token\":\"t\",\"fence\":1,\"leaseMs\":1000,\"attempt\":3}")));
        assertEquals(3, redone.attempt(), "ACQUIRED's attempt");

        Next n = assertInstanceOf(Next.class, Calls.parseOutcome(new Http.Resp(200, "application/json",
                "{\"status\":\"NEXT\",\"lcid\":\"L\",\"token\":\"t\",\"fence\":2,\"leaseMs\":1000,"
                        + "\"request\":{\"requestId\":\"a\",\"attempt\":1,\"traceparent\":\"" + TP + "\",\"tracestate\":\"vendor=x\"},"
                        + "\"requests\":[{\"requestId\":\"a\",\"attempt\":1,\"traceparent\":\"" + TP + "\",\"tracestate\":\"vendor=x\"},"
                        + "{\"requestId\":\"b\",\"attempt\":1,\"future\":true}]}")));
        assertEquals(TP, n.request().traceparent());
        assertEquals("vendor=x", n.request().tracestate());
        assertEquals(TP, n.requests().get(0).traceparent());
        assertNull(n.requests().get(1).traceparent());
        assertNull(n.requests().get(1).tracestate());
        Next v1 = (Next) Calls.parseOutcome(new Http.Resp(200, "application/json",
                "{\"status\":\"NEXT\",\"lcid\":\"L\",\"token\":\"t\",\"fence\":3,\"leaseMs\":1000,"
                        + "\"request\":{\"requestId\":\"a\",\"attempt\":1,\"traceparent\":\"" + TP + "\"}}"));
        assertEquals(TP, v1.request().traceparent());
        assertNull(v1.request().tracestate());

        try (Stub s = new Stub(c -> Stub.Reply.json(200, c.path().contains("/requests/r1")
                ? "{\"lcid\":\"L\",\"requestId\":\"r1\",\"state\":\"QUEUED\",\"position\":1,\"attempt\":1,"
                        + "\"traceparent\":\"" + TP + "\",\"tracestate\":\"vendor=x\",\"later\":[1]}"
                : "{\"lcid\":\"L\",\"requestId\":\"r2\",\"state\":\"DONE\",\"attempt\":1,\"fence\":4}"));
             BatonClient c = client(s, fast(1000))) {
            RequestView v = c.request("L", "r1");
            assertEquals(TP, v.traceparent());
            assertEquals("vendor=x", v.tracestate());
            RequestView none = c.request("L", "r2");
            assertNull(none.traceparent());
            assertNull(none.tracestate());
        }
    }

    @Test
    void sends_the_trace_context_headers_only_when_given() throws Exception {
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire") ? Stub.Reply.json(200, ACQUIRED) : Stub.Reply.json(200, RELEASED));
             BatonClient c = client(s, fast(1000))) {
            c.acquire("L", AcquireRequest.of("r1").trace(TraceContext.of(TP, "vendor=x")));
            c.acquire("L", AcquireRequest.of("r2").trace(TraceContext.of(TP)));
            c.acquire("L", AcquireRequest.of("r3"));
            c.acquire("L", AcquireRequest.of("r4").trace(TraceContext.NONE));
            c.acquire("L", AcquireRequest.of("r5").trace(TraceContext.of("00-bad\r\nX-Evil: 1", "vendor=x")));
            c.run("L", w -> null, RunOptions.of("r6").trace(TraceContext.of(TP, "a=b")));
            List<Stub.Call> calls = s.calls;
            assertEquals(List.of(TP), calls.get(0).headers().get("traceparent"));
            assertEquals(List.of("vendor=x"), calls.get(0).headers().get("tracestate"));
            assertEquals(List.of(TP), calls.get(1).headers().get("traceparent"));
            assertNull(calls.get(1).headers().get("tracestate"));
            for (int i = 2; i <= 4; i++) {
                assertNull(calls.get(i).headers().get("traceparent"), "call " + i);
                assertNull(calls.get(i).headers().get("tracestate"), "call " + i);
            }
            assertEquals("{\"requestId\":\"r1\"}", calls.get(0).body(), "the trace context is no body field");
            assertEquals(List.of(TP), calls.get(5).headers().get("traceparent"));
            assertEquals(List.of("a=b"), calls.get(5).headers().get("tracestate"));
            Stub.Call complete = calls.stream().filter(x -> x.path().endsWith("/complete")).findFirst().orElseThrow();
            assertNull(complete.headers().get("traceparent"), "only the submitting call carries it");
        }
        assertNull(Http.headerValue(""));
        assertNull(Http.headerValue("a\u00e9"));
        assertEquals(TP, Http.headerValue(" " + TP + " "));
    }

    @Test
    @Timeout(20)
    void holder_cancels_when_no_heartbeat_renews_before_its_deadline() throws Exception {
        AtomicInteger completes = new AtomicInteger();
        try (Stub s = new Stub(c -> {
            if (c.path().endsWith("/acquire")) {
                return Stub.Reply.json(200, ACQUIRED); // leaseMs 600
            }
            if (c.path().endsWith("/complete")) {
                completes.incrementAndGet();
                return Stub.Reply.json(200, RELEASED);
            }
            return Stub.Reply.problem(503, "BACKEND_UNAVAILABLE", null); // heartbeats never renew
        }); BatonClient c = client(s, RetryPolicy.DEFAULT)) {
            AtomicBoolean interrupted = new AtomicBoolean();
            long t0 = System.nanoTime();
            RunFailedException failed;
            try (LogCapture log = new LogCapture()) {
                failed = assertThrows(RunFailedException.class, () -> c.run("L", w -> {
                    try {
                        Thread.sleep(10_000);
                    } catch (InterruptedException ie) {
                        interrupted.set(w.isCancelled());
                        throw ie;
                    }
                    return null;
                }, RunOptions.of("r1")));
                // Told apart from a service's 409 in the log line too.
                List<String> lost = log.warnings("lock lost on L");
                assertEquals(1, lost.size(), "one line: " + log.all());
                assertTrue(lost.get(0).contains("decided by this client"), lost.get(0));
                assertFalse(lost.get(0).contains("409"), lost.get(0));
            }
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            LockLostException e = assertInstanceOf(LockLostException.class, failed.getCause());
            assertTrue(interrupted.get(), "the handler thread was interrupted and saw isCancelled()");
            assertTrue(e.byClient());
            assertEquals(0, e.status(), "no HTTP status: the service did not answer");
            assertEquals("LOCK_LOST", e.code());
            assertTrue(e.getMessage().contains("decided by this client"), e.getMessage());
            assertFalse(e.getMessage().startsWith("409"), e.getMessage());
            assertEquals(List.of(), failed.report().handled());
            assertEquals("r1", failed.report().requestId());
            assertTrue(ms >= 550 && ms < 2000, "lost at about the lease: " + ms);
            assertEquals(0, completes.get(), "never completes for a lost holder");
            assertEquals(0, s.count("/abort"), "a lost holder does not abort either");
            assertTrue(s.count("/heartbeat") >= 1);
            assertFalse(Thread.currentThread().isInterrupted(), "no interrupt leaks out of run");
        }
    }

    @Test
    void a_throwing_handler_aborts_with_requeue_and_its_message() throws Exception {
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire") ? Stub.Reply.json(200, ACQUIRED) : Stub.Reply.json(200, RELEASED));
             BatonClient c = client(s, fast(1000))) {
            RunFailedException e = assertThrows(RunFailedException.class, () -> c.run("L", w -> {
                throw new IllegalArgumentException("bad input");
            }, RunOptions.of("r1")));
            assertInstanceOf(IllegalArgumentException.class, e.getCause(), "the handler's own error is the cause");
            assertEquals("bad input", e.getCause().getMessage());
            Stub.Call abort = s.calls.stream().filter(x -> x.path().endsWith("/abort")).findFirst().orElseThrow();
            assertEquals("{\"requestId\":\"r1\",\"token\":\"tok\",\"requeue\":true,\"reason\":\"bad input\"}", abort.body());
            assertEquals(0, s.count("/complete"));
        }
    }

    private static BatonClient tokenClient(Stub s, Path file, Duration refresh) {
        return BatonClient.builder(s.url()).tokenFile(file).tokenRefresh(refresh).retryPolicy(fast(1000))
                .callTimeout(Duration.ofMillis(2000)).build();
    }

    /** Replaces the file in one step, as the kubelet's symlink swap does. */
    private static void rotate(Path file, String content) throws Exception {
        Path next = file.resolveSibling(file.getFileName() + ".next");
        Files.writeString(next, content);
        Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static String auth(Stub.Call c) {
        return c.headers().get("Authorization").get(0);
    }

    @Test
    void the_token_file_is_sent_and_read_again_after_the_refresh_interval(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("token");
        Files.writeString(file, "  tok-1\n");
        List<String> warnings = new CopyOnWriteArrayList<>();
        Logger jul = Logger.getLogger("dev.baton.client");
        Handler h = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                    warnings.add(r.getMessage());
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        jul.addHandler(h);
        try (Stub s = new Stub(c -> Stub.Reply.json(200, RELEASED));
             BatonClient c = tokenClient(s, file, Duration.ZERO);
             BatonClient cached = tokenClient(s, file, Duration.ofSeconds(30))) {
            c.abort("L", "tok", "r1", false, null);
            rotate(file, "tok-2\n");
            c.abort("L", "tok", "r1", false, null);
            cached.abort("L", "tok", "r1", false, null);
            Files.delete(file); // mid-rotation: the last token is kept, and the failure reported once
            c.abort("L", "tok", "r1", false, null);
            c.abort("L", "tok", "r1", false, null);
            assertEquals(List.of("Bearer tok-1", "Bearer tok-2", "Bearer tok-1", "Bearer tok-2", "Bearer tok-2"),
                    s.calls.stream().map(ClientUnitTest::auth).toList());
            assertEquals(1, warnings.size(), "reported once: " + warnings);
            assertTrue(warnings.get(0).contains(file.toString()));
            assertFalse(warnings.get(0).contains("tok-"), "never the token");
        } finally {
            jul.removeHandler(h);
        }
    }

    @Test
    void a_401_with_a_changed_token_file_is_repeated_once_with_the_new_token(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("token");
        Files.writeString(file, "old");
        try (Stub s = new Stub(c -> auth(c).equals("Bearer new") ? Stub.Reply.json(200, RELEASED)
                : Stub.Reply.problem(401, "UNAUTHORIZED", null));
             BatonClient c = tokenClient(s, file, Duration.ofSeconds(30))) {
            rotate(file, "new"); // within the refresh interval: only the 401 makes the client look
            assertEquals(0, c.abort("L", "tok", "r1", false, null).pending());
            assertEquals(List.of("Bearer old", "Bearer new"), s.calls.stream().map(ClientUnitTest::auth).toList());
            assertEquals(s.calls.get(0).body(), s.calls.get(1).body());
        }
    }

    @Test
    void a_401_with_an_unchanged_token_file_is_the_typed_error_after_one_request(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("token");
        Files.writeString(file, "revoked");
        try (Stub s = new Stub(c -> Stub.Reply.problem(401, "UNAUTHORIZED", null));
             BatonClient c = tokenClient(s, file, Duration.ZERO)) {
            UnauthorizedException e = assertThrows(UnauthorizedException.class, () -> c.abort("L", "tok", "r1", false, null));
            assertEquals(401, e.status());
            assertEquals(1, s.calls.size());
            assertFalse(e.getMessage().contains("revoked"), "never the token");
        }
    }

    @Test
    void an_api_key_and_a_token_file_together_are_a_configuration_error(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("token");
        Files.writeString(file, "t");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> BatonClient.builder("http://127.0.0.1:1").apiKey("secret").tokenFile(file).build());
        assertFalse(e.getMessage().contains("secret"));
        assertThrows(IllegalArgumentException.class, () -> BatonClient.builder("http://127.0.0.1:1").tokenRefresh(Duration.ofSeconds(-1)));
    }

    @Test
    void a_missing_or_empty_token_file_fails_the_build_naming_the_path(@TempDir Path dir) throws Exception {
        Path missing = dir.resolve("nope");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> BatonClient.builder("http://127.0.0.1:1").tokenFile(missing).build());
        assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
        Path empty = dir.resolve("empty");
        Files.writeString(empty, " \n\n");
        e = assertThrows(IllegalArgumentException.class, () -> BatonClient.builder("http://127.0.0.1:1").tokenFile(empty).build());
        assertTrue(e.getMessage().contains(empty.toString()), e.getMessage());
        Path bad = dir.resolve("bad");
        Files.writeString(bad, "se\ncret");
        e = assertThrows(IllegalArgumentException.class, () -> BatonClient.builder("http://127.0.0.1:1").tokenFile(bad).build());
        assertFalse(e.getMessage().contains("cret"), "never the content: " + e.getMessage());
    }

    @Test
    void backoff_is_full_jitter_capped_and_at_least_retry_after() {
        RetryPolicy p = RetryPolicy.DEFAULT;
        for (int i = 0; i < 200; i++) {
            assertTrue(p.backoffMs(0, 0) <= 100);
            assertTrue(p.backoffMs(3, 0) <= 800);
            assertTrue(p.backoffMs(40, 0) <= 5000);
            assertTrue(p.backoffMs(0, 1000) >= 1000);
        }
        assertEquals(0, RetryPolicy.NONE.backoffMs(5, 0));
        assertEquals(1000, Http.retryAfterMs("1"));
        assertEquals(0, Http.retryAfterMs("Wed, 21 Oct 2015 07:28:00 GMT"));
        assertEquals(0, Http.retryAfterMs(null));
    }

    @Test
    void lock_order_dedupes_and_sorts_by_utf8_bytes() {
        assertEquals(List.of("A", "B", "a", "b"), Waits.lockOrder(List.of("b", "B", "a", "A", "b")));
        assertEquals(List.of("z", "\u00e9"), Waits.lockOrder(List.of("\u00e9", "z"))); // 0xC3 > 'z'
    }

    @Test
    void reasons_and_path_segments() {
        assertEquals("boom", Calls.reasonOf(new RuntimeException("boom")));
        assertEquals("java.lang.RuntimeException", Calls.reasonOf(new RuntimeException()));
        String surrogates = "a".repeat(1023) + "\ud83d\ude00";
        assertEquals(1023, Calls.cutReason(surrogates).length());
        assertEquals("order-7:a@b.c_d", Calls.seg("order-7:a@b.c_d"));
        assertEquals("a%2Fb%20c", Calls.seg("a/b c"));
    }
}
