package dev.baton.testing;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.request;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.restassured.response.Response;

/** Long-poll calls (protocol v1.1) made in the background, so a test can act while they are held. */
public final class LongPoll {

    /** A thread per held call: a pool sized to the cores (the common pool) would queue them. */
    private static final ExecutorService CALLS = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "long-poll-call");
        thread.setDaemon(true);
        return thread;
    });

    private LongPoll() {
    }

    /** A call running in the background, with when it was answered. */
    public record Pending(CompletableFuture<Response> answer, CompletableFuture<Long> answeredAt) {

        public Response get() throws Exception {
            return answer.get(40, TimeUnit.SECONDS);
        }

        public boolean answered() {
            return answer.isDone();
        }

        /** Milliseconds from {@code since} (System.nanoTime) to the answer. */
        public long millisAfter(long since) throws Exception {
            get();
            return TimeUnit.NANOSECONDS.toMillis(answeredAt.get() - since);
        }
    }

    public static Pending inBackground(Supplier<Response> call) {
        CompletableFuture<Long> at = new CompletableFuture<>();
        CompletableFuture<Response> answer = CompletableFuture.supplyAsync(() -> {
            Response response = call.get();
            at.complete(System.nanoTime());
            return response;
        }, CALLS);
        return new Pending(answer, at);
    }

    public static Pending waitForTurn(String lcid, String requestId, long waitMs) {
        return inBackground(() -> acquire(lcid, fields("requestId", requestId, "mode", "wait", "waitMs", waitMs)));
    }

    public static Pending waitForEnd(String lcid, String requestId, long waitMs) {
        return inBackground(() -> client().queryParam("waitMs", waitMs)
                .get("/v1/locks/{lcid}/requests/{requestId}", lcid, requestId));
    }

    /** Until the waiter's call is surely held (its request is queued), so the order is the test's. */
    public static void untilQueued(String lcid, String requestId) throws InterruptedException {
        for (int i = 0; i < 200; i++) {
            if (request(lcid, requestId).statusCode() == 200) {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError(requestId + " was never queued");
    }
}
