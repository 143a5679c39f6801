package dev.baton.client;

/**
 * The handler threw; {@link #getCause()} is what it threw. Before this is thrown the client aborted the
 * request (the whole batch) with {@code requeue: true} and the error's message as the reason: it is back at the
 * head of its lcid with no holder, and a claim poller (or the next acquire on that lcid) does it; the service
 * dead-letters it after maxAttempts. The claim poller passes this to its {@code onError}; {@code lockAll} throws it
 * for a handler's checked exception; {@code run} throws {@link RunFailedException} with the handler's error as the
 * cause.
 */
public class HandlerFailedException extends BatonException {
    private final String lcid;
    private final String requestId;

    public HandlerFailedException(String lcid, String requestId, Throwable cause) {
        this("handler failed on " + lcid + "/" + requestId + ": " + cause, lcid, requestId, cause);
    }

    HandlerFailedException(String message, String lcid, String requestId, Throwable cause) {
        super(message, cause);
        this.lcid = lcid;
        this.requestId = requestId;
    }

    public String lcid() {
        return lcid;
    }

    /** The request (the first of a batch) the handler failed on. */
    public String requestId() {
        return requestId;
    }
}
