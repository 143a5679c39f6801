package dev.baton.client;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@link Tracing} with the application's OpenTelemetry. The only class of the client that names an
 * {@code io.opentelemetry} type: it is loaded only by {@link Tracing#DETECTED}, once the API was found.
 */
final class OtelTracing implements Tracing {
    static final String SPAN_NAME = "baton.work";
    private static final String SCOPE_NAME = "baton";
    private static final AttributeKey<String> LCID = AttributeKey.stringKey("baton.lcid");
    private static final AttributeKey<String> REQUEST_ID = AttributeKey.stringKey("baton.request_id");
    private static final AttributeKey<Long> FENCE = AttributeKey.longKey("baton.fence");
    private static final AttributeKey<Long> BATCH_SIZE = AttributeKey.longKey("baton.batch_size");
    private static final AttributeKey<List<String>> LCIDS = AttributeKey.stringArrayKey("baton.lcids");
    private static final AttributeKey<List<Long>> FENCES = AttributeKey.longArrayKey("baton.fences");
    private static final String TRACEPARENT = "traceparent";
    private static final String TRACESTATE = "tracestate";
    private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();

    /** Reads a handed-out request's fields as if they were the headers it was submitted with. */
    private static final TextMapGetter<WorkItem> SUBMITTED = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(WorkItem item) {
            return List.of(TRACEPARENT, TRACESTATE);
        }

        @Override
        public String get(WorkItem item, String key) {
            if (item == null) {
                return null;
            }
            return TRACEPARENT.equals(key) ? item.traceparent() : TRACESTATE.equals(key) ? item.tracestate() : null;
        }
    };

    private volatile boolean noGetOrNoop;

    OtelTracing() {
        // Links every class used below now, inside Tracing.detect(), rather than in a holder's first handler.
        Span.fromContext(Context.root()).getSpanContext().isValid();
    }

    @Override
    public TraceContext current() {
        Context ctx = Context.current();
        if (!Span.fromContext(ctx).getSpanContext().isValid()) {
            return null;
        }
        Map<String, String> headers = new HashMap<>(4);
        W3C.inject(ctx, headers, (h, k, v) -> {
            if (h != null) {
                h.put(k, v);
            }
        });
        String parent = headers.get(TRACEPARENT);
        return parent == null ? null : new TraceContext(parent, headers.get(TRACESTATE));
    }

    @Override
    public <T> T work(String lcid, Long fence, List<WorkItem> items, Callable<T> handler) throws Exception {
        SpanBuilder b = builder().setAttribute(LCID, lcid);
        if (fence != null) {
            b.setAttribute(FENCE, fence);
        }
        return run(b, items, handler);
    }

    @Override
    public <T> T workAll(List<String> lcids, List<Long> fences, List<WorkItem> items, Callable<T> handler)
            throws Exception {
        return run(builder().setAttribute(LCIDS, lcids).setAttribute(FENCES, fences), items, handler);
    }

    private SpanBuilder builder() {
        return openTelemetry().getTracer(SCOPE_NAME, Version.CLIENT).spanBuilder(SPAN_NAME);
    }

    @SuppressWarnings("try") // the scope is only closed, never read
    private <T> T run(SpanBuilder b, List<WorkItem> items, Callable<T> handler) throws Exception {
        if (!items.isEmpty()) {
            b.setAttribute(REQUEST_ID, items.get(0).requestId());
        }
        if (items.size() > 1) {
            b.setAttribute(BATCH_SIZE, (long) items.size());
        }
        for (WorkItem item : items) {
            if (item.traceparent() == null) {
                continue;
            }
            // A link, not the parent: the work belongs to the holder's own trace, and a batch has many submitters.
            SpanContext submitted = Span.fromContext(W3C.extract(Context.root(), item, SUBMITTED)).getSpanContext();
            if (submitted.isValid()) {
                b.addLink(submitted, Attributes.of(REQUEST_ID, item.requestId())); // which request of a batch
            }
        }
        Span span = b.startSpan();
        try (Scope scope = span.makeCurrent()) {
            return handler.call();
        } catch (Throwable e) {
            span.recordException(e);
            span.setStatus(StatusCode.ERROR);
            throw e;
        } finally {
            span.end();
        }
    }

    /**
     * The application's global OpenTelemetry, without installing one: before the application has set its
     * own, GlobalOpenTelemetry.get() sets the no-op for good and the application's set() then fails.
     * getOrNoop() does not, but is only in API 1.57.0 and later.
     */
    private OpenTelemetry openTelemetry() {
        if (!noGetOrNoop) {
            try {
                return GlobalOpenTelemetry.getOrNoop();
            } catch (NoSuchMethodError olderApi) {
                noGetOrNoop = true;
            }
        }
        return GlobalOpenTelemetry.get();
    }
}
