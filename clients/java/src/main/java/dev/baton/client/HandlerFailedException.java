package dev.baton.client;

/**
 * The handler threw; {@link #getCause()} is what it threw. Before this is thrown the client aborted the
 * request with {@code requeue: true} and the error's message as the reason, so the request gets another
 * attempt (or goes DEAD after maxAttempts).
 */
public class HandlerFailedException extends BatonException {
    private final String lcid;
    private final String requestId;

    public HandlerFailedException(String lcid, String requestId, Throwable cause) {
        super("handler failed on " + lcid + "/" + requestId + ": " + cause, cause);
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
