package dev.baton.api;

import dev.baton.lock.Outcome;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;

/**
 * Baton's attributes on the server span of a call (the span itself comes from Quarkus'
 * OpenTelemetry instrumentation), so that a lock's calls can be found by lcid or requestId in a
 * trace backend. Names, states and numbers only: never a payload, a result or a token. With
 * tracing off, or a call not sampled, the current span does not record and nothing is set.
 */
final class CallSpan {

    static final AttributeKey<String> TENANT = AttributeKey.stringKey("baton.tenant");
    static final AttributeKey<String> LCID = AttributeKey.stringKey("baton.lcid");
    static final AttributeKey<String> REQUEST_ID = AttributeKey.stringKey("baton.request_id");
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("baton.outcome");
    static final AttributeKey<Long> FENCE = AttributeKey.longKey("baton.fence");

    private CallSpan() {
    }

    /** The current server span, with what the call names; requestId may be null. */
    static Span named(String tenant, String lcid, String requestId) {
        Span span = Span.current();
        if (span.isRecording()) {
            span.setAttribute(TENANT, tenant);
            if (lcid != null) {
                span.setAttribute(LCID, lcid);
            }
            if (requestId != null) {
                span.setAttribute(REQUEST_ID, requestId);
            }
        }
        return span;
    }

    /**
     * The outcome, and the fence of a grant. The span is the one {@link #named} answered: the
     * outcome arrives on the Redis connection's thread, where the current span is not the call's.
     */
    static void answered(Span span, Outcome outcome) {
        if (!span.isRecording()) {
            return;
        }
        if (outcome instanceof Outcome.Acquired acquired) {
            span.setAttribute(OUTCOME, "ACQUIRED");
            span.setAttribute(FENCE, acquired.fence());
        } else if (outcome instanceof Outcome.Next next) {
            span.setAttribute(OUTCOME, "NEXT");
            span.setAttribute(FENCE, next.fence());
            if (next.lcid() != null) {
                span.setAttribute(LCID, next.lcid());
            }
        } else if (outcome instanceof Outcome.Queued) {
            span.setAttribute(OUTCOME, "QUEUED");
        } else if (outcome instanceof Outcome.Released) {
            span.setAttribute(OUTCOME, "RELEASED");
        }
    }

    /** A problem answer, by its code: mappers run on the call's own context, so the current span is the call's. */
    static void problem(String code) {
        Span span = Span.current();
        if (span.isRecording()) {
            span.setAttribute(OUTCOME, code);
        }
    }
}
