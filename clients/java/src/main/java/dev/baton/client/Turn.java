package dev.baton.client;

import java.util.function.Supplier;

/**
 * A {@code wait} request's turn, picked up by {@link BatonClient#awaitTurn}: the caller holds the lock for its
 * own request. The lease is kept alive by heartbeats in the background until {@link #complete} or
 * {@link #abort}. {@link #close()} aborts a turn that was not finished, so try-with-resources never leaves a
 * lock behind.
 */
public final class Turn extends Held implements AutoCloseable {
    private final BatonClient client;
    private final String requestId;
    final String traceparent;
    final String tracestate;
    private boolean finished;

    Turn(BatonClient client, String lcid, String requestId, long fence, Holding holding, String traceparent,
         String tracestate) {
        super(lcid, fence, holding);
        this.client = client;
        this.requestId = requestId;
        this.traceparent = traceparent;
        this.tracestate = tracestate;
    }

    public String requestId() {
        return requestId;
    }

    /**
     * Completes the request with {@code result} (null: none). The lock passes to the next {@code wait} request
     * or is released: RELEASED. Throws {@link LockLostException} (without calling) when the lock is lost.
     */
    public synchronized Outcome complete(Object result) {
        return finish(() -> client.complete(lcid(), holding.token, requestId, result, null));
    }

    /**
     * Gives the turn up. With {@code requeue} the request goes back to the head (attempt + 1) and, being a
     * {@code wait} request, the lock passes straight back to it as a new turn: call awaitTurn again to pick it up.
     */
    public synchronized Released abort(boolean requeue, String reason) {
        return finish(() -> client.abort(lcid(), holding.token, requestId, requeue, reason));
    }

    /** The one call that ends the turn; heartbeats stop with it, whatever it answers. */
    private <T> T finish(Supplier<T> call) {
        if (finished) {
            throw new IllegalStateException("turn of " + lcid() + "/" + requestId + " already finished");
        }
        finished = true;
        try {
            if (!holding.beginFinish()) {
                throw holding.lostException();
            }
            return call.get();
        } finally {
            holding.stop();
        }
    }

    /** Whether complete or abort was called. */
    public synchronized boolean finished() {
        return finished;
    }

    /** Aborts (no requeue) a turn that was neither completed nor aborted; errors are ignored. */
    @Override
    public synchronized void close() {
        if (!finished) {
            try {
                abort(false, "turn closed without complete");
            } catch (BatonException e) {
                client.log(System.Logger.Level.DEBUG, "abort on close of " + lcid() + " failed: " + e.getMessage());
            }
        }
    }
}
