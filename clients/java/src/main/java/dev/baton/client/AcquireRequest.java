package dev.baton.client;

/**
 * The body of an acquire. Only the fields set (non-null) are sent: the service reads bodies strictly, and
 * an absent field means its default.
 *
 * <pre>{@code AcquireRequest.of("order-7-pay").payload(Map.of("amount", 5)).leaseMs(10_000)}</pre>
 *
 * @param requestId required: the request's name and idempotency key, unique per lcid
 * @param payload   any JSON-serializable value (or a JsonNode), at most 64 KiB serialized; null for none
 * @param leaseMs   500 to 600000; null = the service default (30000)
 * @param mode      "handoff" (default) or "wait"
 * @param waitMs    0 to 30000: with mode wait, hold the call until the turn (long-poll)
 * @param take      1 to 100: when the answer is NEXT, how many queued requests to be handed at once
 * @param trace     sent as the traceparent/tracestate headers, not in the body; null: the current
 *                  OpenTelemetry span's context when the application has OpenTelemetry, else none
 */
public record AcquireRequest(String requestId, Object payload, Integer leaseMs, String mode, Integer waitMs,
                             Integer take, TraceContext trace) {
    public static final String HANDOFF = "handoff";
    public static final String WAIT = "wait";

    /** Without a trace context (the 1.1.0 constructor). */
    public AcquireRequest(String requestId, Object payload, Integer leaseMs, String mode, Integer waitMs, Integer take) {
        this(requestId, payload, leaseMs, mode, waitMs, take, null);
    }

    public static AcquireRequest of(String requestId) {
        return new AcquireRequest(requestId, null, null, null, null, null, null);
    }

    public AcquireRequest payload(Object p) {
        return new AcquireRequest(requestId, p, leaseMs, mode, waitMs, take, trace);
    }

    public AcquireRequest leaseMs(Integer ms) {
        return new AcquireRequest(requestId, payload, ms, mode, waitMs, take, trace);
    }

    public AcquireRequest mode(String m) {
        return new AcquireRequest(requestId, payload, leaseMs, m, waitMs, take, trace);
    }

    public AcquireRequest waitMs(Integer ms) {
        return new AcquireRequest(requestId, payload, leaseMs, mode, ms, take, trace);
    }

    public AcquireRequest take(Integer n) {
        return new AcquireRequest(requestId, payload, leaseMs, mode, waitMs, n, trace);
    }

    public AcquireRequest trace(TraceContext t) {
        return new AcquireRequest(requestId, payload, leaseMs, mode, waitMs, take, t);
    }
}
