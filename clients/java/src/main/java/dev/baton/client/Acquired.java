package dev.baton.client;

/**
 * You hold the lock; work on your own request (acquire, a wait request's turn), or the lease was renewed
 * (heartbeat).
 *
 * @param lcid      the lcid
 * @param requestId your request (heartbeat: the active request, the first of a batch)
 * @param token     the holder's token: a capability, never log it
 * @param fence     strictly increasing per lcid with every grant and handoff; pass it to your database
 * @param leaseMs   the lease now in force
 * @param expiresAt when the lease ends, RFC 3339 by the Redis clock (informative: the client keeps its own deadline)
 * @param traceparent the W3C trace context your request was submitted with, or null (always null on a heartbeat)
 * @param tracestate  its tracestate, or null
 * @param attempt   which attempt of the request this grant is (protocol v1.2; 1 from an older service): more than 1
 *                  means the work is being redone
 */
public record Acquired(String lcid, String requestId, String token, long fence, long leaseMs, String expiresAt,
                       String traceparent, String tracestate, int attempt) implements Outcome {
    /** Without an attempt (the trace context constructor): attempt 1. */
    public Acquired(String lcid, String requestId, String token, long fence, long leaseMs, String expiresAt,
                    String traceparent, String tracestate) {
        this(lcid, requestId, token, fence, leaseMs, expiresAt, traceparent, tracestate, 1);
    }

    /** Without a trace context (the 1.1.0 constructor): attempt 1. */
    public Acquired(String lcid, String requestId, String token, long fence, long leaseMs, String expiresAt) {
        this(lcid, requestId, token, fence, leaseMs, expiresAt, null, null, 1);
    }

    @Override
    public String status() {
        return "ACQUIRED";
    }

    @Override
    public String toString() { // never show the token
        return "Acquired[lcid=" + lcid + ", requestId=" + requestId + ", fence=" + fence + ", leaseMs=" + leaseMs
                + ", expiresAt=" + expiresAt + ", traceparent=" + traceparent + ", attempt=" + attempt + "]";
    }
}
