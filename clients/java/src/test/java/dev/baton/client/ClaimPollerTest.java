package dev.baton.client;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The claim poller as clients/README.md ("The claim poller") has it: onError, onClaim, its report, stopping. */
class ClaimPollerTest {
    private static final Stub.Reply NO_WORK = new Stub.Reply(204, null, "", Map.of(), 0);

    private static String claimed(String id) {
        return "{\"status\":\"NEXT\",\"lcid\":\"C\",\"token\":\"tok-" + id + "\",\"fence\":3,\"leaseMs\":30000,"
                + "\"requests\":[{\"requestId\":\"" + id + "\",\"attempt\":2}]}";
    }

    @Test
    @Timeout(20)
    void errors_go_to_on_error_each_claim_to_on_claim_and_the_report_counts_them() throws Exception {
        AtomicInteger claims = new AtomicInteger();
        try (Stub s = new Stub(c -> {
            if (c.path().equals("/v1/claims")) {
                return switch (claims.getAndIncrement()) {
                    case 0 -> Stub.Reply.json(200, claimed("bad"));
                    case 1 -> Stub.Reply.problem(400, "INVALID_REQUEST", null); // a failed claim
                    case 2 -> Stub.Reply.json(200, claimed("good"));
                    default -> NO_WORK;
                };
            }
            return Stub.Reply.json(200, "{\"status\":\"RELEASED\",\"lcid\":\"C\",\"pending\":0}");
        }); BatonClient c = RunTest.client(s, 1000)) {
            List<BatonException> errors = Collections.synchronizedList(new ArrayList<>());
            List<String> seen = new ArrayList<>();
            List<String> events = new ArrayList<>();
            IllegalStateException boom = new IllegalStateException("boom on bad");
            ClaimReport r = c.runClaims(w -> {
                events.add("handler " + w.request().requestId());
                if (w.request().requestId().equals("bad")) {
                    throw boom;
                }
                return null;
            }, ClaimOptions.defaults().onError(errors::add).onClaim(n -> {
                seen.add(n.request().requestId());
                events.add("claim " + n.request().requestId());
            }).stop(() -> claims.get() > 3));
            assertEquals(List.of("bad", "good"), seen);
            assertEquals(List.of("claim bad", "handler bad", "claim good", "handler good"), events, "onClaim before the work");
            assertEquals(2, errors.size(), errors.toString());
            HandlerFailedException handlerError = assertInstanceOf(HandlerFailedException.class, errors.get(0));
            assertTrue(handlerError.getCause() == boom && handlerError.requestId().equals("bad") && handlerError.lcid().equals("C"));
            assertInstanceOf(InvalidRequestException.class, errors.get(1));
            assertEquals(2, r.claims());
            assertEquals(1, r.handled());
            assertEquals(2, r.failed(), "errors passed to onError");
            assertTrue(r.emptyPolls() >= 1);
            Stub.Call abort = s.calls.stream().filter(x -> x.path().endsWith("/abort")).findFirst().orElseThrow();
            assertTrue(abort.body().contains("\"requeue\":true"), abort.body());
        }
    }

    @Test
    @Timeout(20)
    void by_default_errors_are_warnings_in_the_log() throws Exception {
        AtomicInteger claims = new AtomicInteger();
        try (Stub s = new Stub(c -> c.path().equals("/v1/claims") && claims.getAndIncrement() == 0
                ? Stub.Reply.json(200, claimed("bad")) : c.path().equals("/v1/claims") ? NO_WORK
                : Stub.Reply.json(200, "{\"status\":\"RELEASED\",\"lcid\":\"C\",\"pending\":0}"));
             BatonClient c = RunTest.client(s, 1000); LogCapture log = new LogCapture()) {
            ClaimReport r = c.runClaims(w -> {
                throw new IllegalStateException("boom in the handler");
            }, ClaimOptions.defaults().stop(() -> claims.get() > 1));
            assertEquals(1, r.failed());
            List<String> warned = log.warnings("boom in the handler");
            assertEquals(1, warned.size(), log.all().toString());
            assertTrue(warned.get(0).contains("C/bad"), warned.get(0));
        }
    }

    @Test
    @Timeout(20)
    void stopping_ends_a_claim_in_flight_at_once_retries_included() throws Exception {
        CountDownLatch retrying = new CountDownLatch(2);
        // An outage: every claim attempt is a 503 that the default policy would retry for 30 s, the second one
        // slow to answer as well.
        try (Stub s = new Stub(c -> {
            retrying.countDown();
            return new Stub.Reply(503, "application/problem+json", "{\"code\":\"BACKEND_UNAVAILABLE\",\"status\":503}",
                    Map.of("Retry-After", "1"), retrying.getCount() == 0 ? 3000 : 0);
        }); BatonClient c = BatonClient.builder(s.url()).apiKey("k").build()) {
            AtomicBoolean stop = new AtomicBoolean();
            CompletableFuture<ClaimReport> poller = CompletableFuture.supplyAsync(() ->
                    c.runClaims(w -> null, ClaimOptions.defaults().stop(stop::get)));
            assertTrue(retrying.await(10, TimeUnit.SECONDS), "the claim is being retried");
            long stoppedAt = System.nanoTime();
            stop.set(true);
            ClaimReport r = poller.get(5, TimeUnit.SECONDS);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt);
            assertTrue(ms < 500, "ended at once, not after the retry deadline or the slow answer: " + ms + " ms");
            assertEquals(0, r.failed(), "a stop is no failure");
            assertEquals(0, r.claims());
        }
    }

    @Test
    @Timeout(20)
    void stopping_during_the_backoff_sleep_ends_it_at_once() throws Exception {
        CountDownLatch first = new CountDownLatch(1);
        try (Stub s = new Stub(c -> {
            first.countDown();
            return Stub.Reply.problem(503, "BACKEND_UNAVAILABLE", "5"); // a 5 s Retry-After to sleep through
        }); BatonClient c = BatonClient.builder(s.url()).apiKey("k").build()) {
            AtomicBoolean stop = new AtomicBoolean();
            CompletableFuture<ClaimReport> poller = CompletableFuture.supplyAsync(() ->
                    c.runClaims(w -> null, ClaimOptions.defaults().stop(stop::get)));
            assertTrue(first.await(10, TimeUnit.SECONDS));
            Thread.sleep(100); // in the Retry-After sleep now (nothing to await: the client is silent there)
            long stoppedAt = System.nanoTime();
            stop.set(true);
            poller.get(5, TimeUnit.SECONDS);
            assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt) < 500);
            assertEquals(1, s.calls.size(), "no further attempt");
        }
    }

    @Test
    void the_report_keeps_the_1_1_0_name_of_failed() {
        @SuppressWarnings("deprecation")
        long failures = new ClaimReport(1, 2, 3, 4).failures();
        assertEquals(4, failures);
    }
}
