package dev.baton.lock;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;

/**
 * Which lock a script call was about, and the trace of the HTTP call that made it: the fields an
 * operator's log line carries. requestId, traceId and spanId may be null (a heartbeat names no
 * request; tracing may be off).
 */
public record CallContext(String tenant, String lcid, String requestId, String traceId, String spanId) {

    /** Read on the caller's own context, where the current span is the call's. */
    static CallContext current(String tenant, String lcid, String requestId) {
        SpanContext span = Span.current().getSpanContext();
        return span.isValid() ? new CallContext(tenant, lcid, requestId, span.getTraceId(), span.getSpanId())
                : new CallContext(tenant, lcid, requestId, null, null);
    }
}
