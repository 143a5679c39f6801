package dev.baton.client;

import java.util.UUID;

/**
 * Options of {@link BatonClient#run}.
 *
 * @param requestId the request to submit (default: a random UUID); reuse it to resume the same work
 * @param payload   its payload, or null
 * @param leaseMs   the lease (null: the service default, 30000); heartbeats are sent every lease/3
 * @param take      batch handoff: how many queued requests to take at once (null: 1)
 * @param trace     the trace context to submit the request with (null: the current OpenTelemetry span's, if any)
 * @param onSubmit  called exactly once when Baton acknowledged the request as stored, before any handler runs
 *                  (null: none); see {@link SubmitListener}
 */
public record RunOptions(String requestId, Object payload, Integer leaseMs, Integer take, TraceContext trace,
                         SubmitListener onSubmit) {
    /** Without onSubmit (the trace context constructor). */
    public RunOptions(String requestId, Object payload, Integer leaseMs, Integer take, TraceContext trace) {
        this(requestId, payload, leaseMs, take, trace, null);
    }

    /** Without a trace context (the 1.1.0 constructor). */
    public RunOptions(String requestId, Object payload, Integer leaseMs, Integer take) {
        this(requestId, payload, leaseMs, take, null, null);
    }

    public static RunOptions of(String requestId) {
        return new RunOptions(requestId, null, null, null, null, null);
    }

    /** A fresh random requestId. */
    public static RunOptions defaults() {
        return of(UUID.randomUUID().toString());
    }

    public RunOptions payload(Object p) {
        return new RunOptions(requestId, p, leaseMs, take, trace, onSubmit);
    }

    public RunOptions leaseMs(Integer ms) {
        return new RunOptions(requestId, payload, ms, take, trace, onSubmit);
    }

    public RunOptions take(Integer n) {
        return new RunOptions(requestId, payload, leaseMs, n, trace, onSubmit);
    }

    public RunOptions trace(TraceContext t) {
        return new RunOptions(requestId, payload, leaseMs, take, t, onSubmit);
    }

    public RunOptions onSubmit(SubmitListener l) {
        return new RunOptions(requestId, payload, leaseMs, take, trace, l);
    }
}
