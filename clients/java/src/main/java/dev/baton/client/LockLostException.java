package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * 409 LOCK_LOST: the token is not the live holder's (its lease ran out, the lock was handed on or released).
 * Stop working on the request and stop writing with its fence; do not retry. The request is not lost: it is
 * requeued, handed on, or already done.
 *
 * <p>Also thrown without any answer from the service when the holder's own lease deadline passed (the send
 * time of its last successful renewal + the lease, on the monotonic clock) before a heartbeat could renew
 * it: then {@link #clientSide()} is true and the body is made up by the client.
 */
public class LockLostException extends BatonProblemException {
    private final boolean clientSide;

    public LockLostException(JsonNode body, int status, long retryAfterMs) {
        super(body, status, retryAfterMs);
        this.clientSide = false;
    }

    private LockLostException(JsonNode body) {
        super(body, 409, 0);
        this.clientSide = true;
    }

    /** A lock lost by the holder's own deadline (no renewal in time), for {@code lcid}. */
    static LockLostException deadlinePassed(String lcid, String why) {
        ObjectNode b = JsonNodeFactory.instance.objectNode();
        b.put("type", "urn:baton:problem:lock-lost");
        b.put("title", "Lock lost");
        b.put("status", 409);
        b.put("code", "LOCK_LOST");
        b.put("detail", why + " (lcid " + lcid + ")");
        return new LockLostException(b);
    }

    /** True when the client decided the loss itself (lease deadline passed), false for a service answer. */
    public boolean clientSide() {
        return clientSide;
    }
}
