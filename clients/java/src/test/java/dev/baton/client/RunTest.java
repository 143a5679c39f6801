package dev.baton.client;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code run} as clients/README.md ("The holder") has it: its report, onSubmit, DUPLICATE_REQUEST after its own
 * retry, the report a failed run keeps, and a lock lost by the service's answer. Against the local stub.
 */
class RunTest {
    static final String ACQUIRED_R1 = "{\"status\":\"ACQUIRED\",\"lcid\":\"L\",\"requestId\":\"r1\",\"token\":\"tok\","
            + "\"fence\":7,\"leaseMs\":30000,\"attempt\":1}";
    static final String RELEASED = "{\"status\":\"RELEASED\",\"lcid\":\"L\",\"pending\":0}";
    static final String QUEUED_R1 = "{\"status\":\"QUEUED\",\"lcid\":\"L\",\"requestId\":\"r1\",\"position\":2,\"queueLength\":2}";

    static BatonClient client(Stub s, long deadlineMs) {
        return BatonClient.builder(s.url()).apiKey("secret").callTimeout(Duration.ofMillis(2000))
                .retryPolicy(new RetryPolicy(Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofMillis(deadlineMs)))
                .build();
    }

    static String next(String... ids) {
        StringBuilder list = new StringBuilder();
        for (String id : ids) {
            list.append(list.length() == 0 ? "" : ",").append("{\"requestId\":\"").append(id).append("\",\"attempt\":1}");
        }
        return "{\"status\":\"NEXT\",\"lcid\":\"L\",\"token\":\"tok\",\"fence\":9,\"leaseMs\":30000,\"requests\":[" + list + "]}";
    }

    static Stub.Reply duplicate(String state) {
        return new Stub.Reply(409, "application/problem+json", "{\"type\":\"urn:baton:problem:duplicate-request\","
                + "\"title\":\"Duplicate request\",\"status\":409,\"code\":\"DUPLICATE_REQUEST\",\"detail\":\"known\","
                + "\"instance\":\"/v1/locks/L/acquire\",\"state\":\"" + state + "\",\"attempt\":1}", Map.of(), 0);
    }

    /** The README's first example, against the stub: a claim poller in the background next to run. */
    @Test
    @Timeout(20)
    void readme_first_example_runs_a_claim_poller_next_to_run() throws Exception {
        try (Stub s = new Stub(c -> c.path().equals("/v1/claims") ? new Stub.Reply(204, null, "", Map.of(), 0)
                : c.path().endsWith("/acquire") ? Stub.Reply.json(200, ACQUIRED_R1) : Stub.Reply.json(200, RELEASED));
             BatonClient baton = client(s, 1000)) {
            List<Long> fences = Collections.synchronizedList(new ArrayList<>());
            Handler apply = work -> {
                fences.add(work.fence());
                return Map.of("ok", true);
            };
            AtomicBoolean stopping = new AtomicBoolean();
            AtomicReference<ClaimReport> polled = new AtomicReference<>();
            Thread poller = new Thread(() -> polled.set(baton.runClaims(apply,
                    ClaimOptions.defaults().lcidPrefix("order-").stop(stopping::get))));
            poller.start();
            Env.await("the poller claims", Duration.ofSeconds(5), () -> s.count("/v1/claims") >= 1);

            RunReport r = baton.run("L", apply, RunOptions.of("r1").payload(Map.of("amount", 5)));
            assertEquals("RELEASED", r.status());
            assertTrue(r.handledOwn());
            assertEquals(List.of(7L), fences);

            stopping.set(true);
            poller.join(5000);
            assertFalse(poller.isAlive());
            assertEquals(0, polled.get().claims());
            assertTrue(s.calls.stream().filter(c -> c.path().equals("/v1/claims")).allMatch(c -> c.body().equals("{\"lcidPrefix\":\"order-\"}")));
        }
    }

    @Test
    void the_report_has_request_id_released_and_handled_own() throws Exception {
        String passed = "{\"status\":\"RELEASED\",\"lcid\":\"L\",\"pending\":1,\"passedTo\":\"w1\"}";
        AtomicInteger completes = new AtomicInteger();
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire") ? Stub.Reply.json(200, ACQUIRED_R1)
                : Stub.Reply.json(200, completes.getAndIncrement() == 0 ? next("h2") : passed));
             BatonClient c = client(s, 1000)) {
            RunReport r = c.run("L", w -> null, RunOptions.of("r1"));
            assertEquals("RELEASED", r.status());
            assertEquals("L", r.lcid());
            assertEquals("r1", r.requestId());
            assertNull(r.position());
            assertEquals(List.of("r1", "h2"), r.handled());
            assertTrue(r.handledOwn());
            assertEquals("w1", r.released().passedTo());
            assertEquals(1, r.released().pending());
        }
    }

    @Test
    void the_own_request_carries_the_attempt_of_acquired() throws Exception {
        String redone = ACQUIRED_R1.replace("\"attempt\":1", "\"attempt\":2");
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire") ? Stub.Reply.json(200, redone) : Stub.Reply.json(200, RELEASED));
             BatonClient c = client(s, 1000)) {
            List<Integer> attempts = new ArrayList<>();
            c.run("L", w -> attempts.add(w.request().attempt()), RunOptions.of("r1").payload(Map.of("n", 1)));
            assertEquals(List.of(2), attempts);
        }
    }

    @Test
    void released_after_other_work_is_not_the_own_request_done() throws Exception {
        // The acquire rescued a queue (NEXT with h1); the lock then passed to a wait request ahead of r2.
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire") ? Stub.Reply.json(200, next("h1"))
                : Stub.Reply.json(200, "{\"status\":\"RELEASED\",\"lcid\":\"L\",\"pending\":1,\"passedTo\":\"w1\"}"));
             BatonClient c = client(s, 1000)) {
            RunReport r = c.run("L", w -> null, RunOptions.of("r2"));
            assertEquals("RELEASED", r.status());
            assertEquals("r2", r.requestId());
            assertEquals(List.of("h1"), r.handled());
            assertFalse(r.handledOwn(), "RELEASED does not mean r2 was done");
        }
    }

    @Test
    void queued_reports_its_position_and_a_generated_request_id() throws Exception {
        try (Stub s = new Stub(c -> Stub.Reply.json(202, QUEUED_R1)); BatonClient c = client(s, 1000)) {
            RunReport r = c.run("L", w -> null);
            assertEquals("QUEUED", r.status());
            assertEquals(2, r.position());
            assertFalse(r.requestId().isEmpty(), "the generated requestId is reported");
            assertTrue(s.calls.get(0).body().contains(r.requestId()));
            assertFalse(r.handledOwn());
            assertNull(r.released());
        }
    }

    @Test
    void on_submit_is_called_once_before_the_handler_with_the_outcome() throws Exception {
        List<String> events = Collections.synchronizedList(new ArrayList<>());
        List<Outcome> outcomes = new ArrayList<>();
        AtomicInteger completes = new AtomicInteger();
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire") ? Stub.Reply.json(200, ACQUIRED_R1)
                : Stub.Reply.json(200, completes.getAndIncrement() == 0 ? next("h2") : RELEASED));
             BatonClient c = client(s, 1000)) {
            c.run("L", w -> {
                events.add("handler " + w.request().requestId());
                return null;
            }, RunOptions.of("r1").onSubmit((lcid, rid, outcome) -> {
                events.add("submitted " + lcid + " " + rid);
                outcomes.add(outcome);
            }));
            assertEquals(List.of("submitted L r1", "handler r1", "handler h2"), events);
            assertEquals("r1", assertInstanceOf(Acquired.class, outcomes.get(0)).requestId());
        }
        events.clear();
        outcomes.clear();
        try (Stub s = new Stub(c -> Stub.Reply.json(202, QUEUED_R1)); BatonClient c = client(s, 1000)) {
            c.run("L", w -> null, RunOptions.of("r1").onSubmit((lcid, rid, outcome) -> {
                events.add("submitted " + rid);
                outcomes.add(outcome);
            }));
            assertEquals(List.of("submitted r1"), events);
            assertEquals(2, assertInstanceOf(Queued.class, outcomes.get(0)).position());
        }
    }

    @Test
    void an_on_submit_that_throws_gives_the_lock_back_and_fails_the_run() throws Exception {
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire") ? Stub.Reply.json(200, ACQUIRED_R1)
                : Stub.Reply.json(200, RELEASED)); BatonClient c = client(s, 1000)) {
            AtomicInteger handlers = new AtomicInteger();
            IllegalStateException journal = new IllegalStateException("journal down");
            RunFailedException e = assertThrows(RunFailedException.class, () -> c.run("L", w -> handlers.incrementAndGet(),
                    RunOptions.of("r1").onSubmit((lcid, rid, outcome) -> {
                        throw journal;
                    })));
            assertSame(journal, e.getCause());
            assertEquals(0, handlers.get(), "no handler after a failed onSubmit");
            Stub.Call abort = s.calls.stream().filter(x -> x.path().endsWith("/abort")).findFirst().orElseThrow();
            assertEquals("{\"requestId\":\"r1\",\"token\":\"tok\",\"requeue\":true,\"reason\":\"journal down\"}", abort.body());
        }
    }

    @Test
    void a_duplicate_after_the_runs_own_retry_is_queued() throws Exception {
        for (String state : List.of("ACTIVE", "DONE")) {
            AtomicInteger n = new AtomicInteger();
            List<Outcome> submitted = new ArrayList<>();
            AtomicInteger calls = new AtomicInteger();
            // The first attempt was stored, its answer lost to a 503; another holder took r1 since.
            try (Stub s = new Stub(c -> n.getAndIncrement() == 0 ? Stub.Reply.problem(503, "BACKEND_UNAVAILABLE", "0")
                    : duplicate(state)); BatonClient c = client(s, 2000)) {
                RunReport r = c.run("L", w -> null, RunOptions.of("r1").onSubmit((lcid, rid, outcome) -> {
                    calls.incrementAndGet();
                    submitted.add(outcome);
                }));
                assertEquals("QUEUED", r.status(), state);
                assertNull(r.position(), "no position");
                assertFalse(r.handledOwn());
                assertEquals(List.of(), r.handled());
                assertEquals("r1", r.requestId());
                assertEquals(1, calls.get(), "onSubmit once");
                assertNull(submitted.get(0), "no outcome on the duplicate path");
                assertEquals(2, s.calls.size());
            }
        }
    }

    @Test
    void a_duplicate_on_the_first_send_fails_the_run() throws Exception {
        AtomicInteger submitted = new AtomicInteger();
        try (Stub s = new Stub(c -> duplicate("DONE")); BatonClient c = client(s, 2000)) {
            RunFailedException e = assertThrows(RunFailedException.class, () -> c.run("L", w -> null,
                    RunOptions.of("r1").onSubmit((lcid, rid, outcome) -> submitted.incrementAndGet())));
            assertInstanceOf(DuplicateRequestException.class, e.getCause());
            assertEquals(0, submitted.get());
            assertEquals(1, s.calls.size());
        }
        // After a retry, a request that ended otherwise (ABORTED, DEAD) is not this call's: raised too.
        AtomicInteger n = new AtomicInteger();
        try (Stub s = new Stub(c -> n.getAndIncrement() == 0 ? Stub.Reply.problem(503, "BACKEND_UNAVAILABLE", "0")
                : duplicate("ABORTED")); BatonClient c = client(s, 2000)) {
            RunFailedException e = assertThrows(RunFailedException.class, () -> c.run("L", w -> null, RunOptions.of("r1")));
            assertEquals("ABORTED", assertInstanceOf(DuplicateRequestException.class, e.getCause()).state());
        }
    }

    @Test
    void a_failed_run_keeps_its_report() throws Exception {
        AtomicInteger completes = new AtomicInteger();
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire") ? Stub.Reply.json(200, ACQUIRED_R1)
                : Stub.Reply.json(200, c.path().endsWith("/complete") && completes.getAndIncrement() == 0 ? next("h2") : RELEASED));
             BatonClient c = client(s, 1000)) {
            IllegalArgumentException boom = new IllegalArgumentException("bad h2");
            RunFailedException e = assertThrows(RunFailedException.class, () -> c.run("L", w -> {
                if (w.request().requestId().equals("h2")) {
                    throw boom;
                }
                return null;
            }, RunOptions.of("r1")));
            assertSame(boom, e.getCause(), "the original error is the cause");
            RunReport r = e.report();
            assertEquals(List.of("r1"), r.handled(), "what was handled until then");
            assertTrue(r.handledOwn());
            assertEquals("r1", r.requestId());
            assertEquals("L", r.lcid());
            assertEquals("FAILED", r.status(), "a failed run ended neither QUEUED nor RELEASED");
            assertTrue(e.getMessage().contains("h2"), e.getMessage());
        }
        // A call that failed after its retries: the acquire itself.
        try (Stub s = new Stub(c -> Stub.Reply.problem(503, "BACKEND_UNAVAILABLE", "0")); BatonClient c = client(s, 1000)) {
            RunFailedException e = assertThrows(RunFailedException.class, () -> c.run("L", w -> null, RunOptions.of("r1")));
            assertInstanceOf(BackendUnavailableException.class, e.getCause(), String.valueOf(e.getCause()));
            assertEquals(List.of(), e.report().handled());
            assertFalse(e.report().handledOwn());
        }
    }

    @Test
    @Timeout(20)
    void a_lock_lost_by_the_services_answer_is_its_409() throws Exception {
        String acquired = "{\"status\":\"ACQUIRED\",\"lcid\":\"L\",\"requestId\":\"r1\",\"token\":\"tok\",\"fence\":7,\"leaseMs\":600}";
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire") ? Stub.Reply.json(200, acquired)
                : c.path().endsWith("/heartbeat") ? Stub.Reply.problem(409, "LOCK_LOST", null) : Stub.Reply.json(200, RELEASED));
             BatonClient c = client(s, 1000); LogCapture log = new LogCapture()) {
            RunFailedException e = assertThrows(RunFailedException.class, () -> c.run("L", w -> {
                Thread.sleep(10_000);
                return null;
            }, RunOptions.of("r1")));
            LockLostException lost = assertInstanceOf(LockLostException.class, e.getCause());
            assertFalse(lost.byClient());
            assertEquals(409, lost.status());
            assertEquals("stub LOCK_LOST", lost.detail(), "the service's problem");
            List<String> lines = log.warnings("lock lost on L");
            assertEquals(1, lines.size(), "one line: " + log.all());
            assertTrue(lines.get(0).contains("409 LOCK_LOST") && lines.get(0).contains("decided by the service"), lines.get(0));
            assertEquals(0, s.count("/complete"));
        }
    }
}
