package dev.baton.redis;

import jakarta.enterprise.context.ApplicationScoped;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.smallrye.mutiny.Uni;

/**
 * A client span per script call, named after the script, under the span of the HTTP call that
 * made it. Only under a span that records: background work (sweeps, re-checks without a call)
 * makes no traces of its own, and with tracing off this costs one look at the current context.
 * Never the script's keys or arguments: they hold tokens, payloads and results.
 */
@ApplicationScoped
public class ScriptSpans {

    private static final AttributeKey<String> DB_SYSTEM = AttributeKey.stringKey("db.system");
    private static final AttributeKey<String> DB_OPERATION = AttributeKey.stringKey("db.operation");

    private final Tracer tracer;

    ScriptSpans(Tracer tracer) {
        this.tracer = tracer;
    }

    <T> Uni<T> traced(LuaScript script, Uni<T> call) {
        Context parent = Context.current();
        if (!Span.fromContext(parent).isRecording()) {
            return call;
        }
        return Uni.createFrom().deferred(() -> {
            Span span = tracer.spanBuilder(script.spanName()).setParent(parent).setSpanKind(SpanKind.CLIENT)
                    .setAttribute(DB_SYSTEM, "redis").setAttribute(DB_OPERATION, "EVALSHA").startSpan();
            return call.onItemOrFailure().invoke((item, failure) -> {
                if (failure != null) {
                    // The class only: a message may quote a reply.
                    span.setStatus(StatusCode.ERROR, failure.getClass().getSimpleName());
                }
                span.end();
            });
        });
    }
}
