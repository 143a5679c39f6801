package dev.baton.client;

import java.util.function.Supplier;

/**
 * A {@code wait} request's turn, picked up by {@link BatonClient#awaitTurn}: the caller holds the lock for its
 * own request. It is live when returned (a turn that came after a long wait was renewed first), and the lease is
 * kept alive by heartbeats in the background until {@link #complete} or {@link #abort}. {@link #close()} aborts a
 * turn that was not finished, so try-with-resources never leaves a lock behind.
 */
public final class Turn extends Held implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("dev.baton.client");

    private final Calls calls;
    private final String requestId;
    private final int attempt;
    final String traceparent;
    final String tracestate;
    private boolean finished;

    Turn(Calls calls, String lcid, String requestId, long fence, int attempt, Holding holding, String traceparent,
         String tracestate) {
        super(lcid, fence, holding);
        this.calls = calls;
        this.requestId = requestId;
        this.attempt = attempt;
        this.traceparent = traceparent;
        this.tracestate = tracestate;
    }

    public String requestId() {
        return requestId;
    }

    /**
     * Which attempt of the request this turn is (from the ACQUIRED answer; 1 from a service older than protocol
     * v1.2): more than 1 means the work is being redone (an earlier turn's lease ran out, or it was requeued).
     */
    public int attempt() {
        return attempt;
    }

    /**
     * Completes the request with {@code result} (null: none). The lock passes to the next {@code wait} request
     * or is released: RELEASED. Throws {@link LockLostException} (without calling) when the lock is lost.
     */
    public synchronized Outcome complete(Object result) {
        return finish(() -> calls.complete(lcid(), holding.token, requestId, result, null));
    }

    /**
     * Gives the turn up. With {@code requeue} the request goes back to the head (attempt + 1) and, being a
     * {@code wait} request, the lock passes straight back to it as a new turn: call awaitTurn again to pick it up.
     */
    public synchronized Released abort(boolean requeue, String reason) {
        return finish(() -> calls.abort(lcid(), holding.token, requestId, requeue, reason));
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
                LOG.log(System.Logger.Level.DEBUG, "abort on close of " + lcid() + " failed: " + e.getMessage());
            }
        }
    }
}
