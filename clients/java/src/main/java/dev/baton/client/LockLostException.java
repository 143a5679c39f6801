package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The lock is lost: stop working on the request and stop writing with its fence; do not retry. The request is
 * not lost: it is requeued, handed on, or already done.
 *
 * <p>Who decided is told apart. The service: it answered 409 {@code LOCK_LOST} (its lease ran out, the lock was
 * handed on or released); {@link #byClient()} is false and the problem is the service's. Or the client itself:
 * the holder's own lease deadline (the send time of its last successful renewal + the lease, on the monotonic
 * clock) passed before a heartbeat could renew it, so the service was not heard; {@link #byClient()} is true,
 * {@link #status()} is 0 (no HTTP answer) and the message and the client's log line say so.
 */
public class LockLostException extends BatonProblemException {
    private final boolean byClient;

    public LockLostException(JsonNode body, int status, long retryAfterMs) {
        super(body, status, retryAfterMs);
        this.byClient = false;
    }

    private LockLostException(JsonNode body, String message) {
        super(body, 0, 0, message);
        this.byClient = true;
    }

    /** A lock lost by the holder's own deadline (no renewal in time), for {@code lcid}: no answer of the service. */
    static LockLostException byClient(String lcid, String why) {
        ObjectNode b = JsonNodeFactory.instance.objectNode();
        b.put("type", "urn:baton:problem:lock-lost");
        b.put("title", "Lock lost");
        b.put("code", "LOCK_LOST");
        b.put("detail", why + " (lcid " + lcid + ")");
        return new LockLostException(b, "lock lost on " + lcid + ", decided by this client (no LOCK_LOST answer): "
                + why);
    }

    /** The same loss again, thrown from the calling thread (a service's loss keeps its problem). */
    LockLostException again() {
        return byClient ? new LockLostException(body(), getMessage()) : new LockLostException(body(), status(), 0);
    }

    /** True when the client decided the loss itself (lease deadline passed), false for a service answer. */
    public boolean byClient() {
        return byClient;
    }
}
