package dev.baton.client;

/**
 * A W3C trace context to submit a request with: sent as the {@code traceparent} and {@code tracestate}
 * headers of the acquire, stored with the request and handed back with it to whoever works on it.
 *
 * <p>Without one, the client sends the current OpenTelemetry span's context when the application has
 * OpenTelemetry, and nothing otherwise. {@link #NONE} sends nothing even then.
 *
 * <pre>{@code AcquireRequest.of("order-7-pay").trace(TraceContext.of("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))}</pre>
 *
 * @param traceparent {@code version-traceid-parentid-flags} in lower-case hex; null: send no trace context
 * @param tracestate  the vendor entries that go with it, or null
 */
public record TraceContext(String traceparent, String tracestate) {
    /** Sends no trace context, not even the current span's. */
    public static final TraceContext NONE = new TraceContext(null, null);

    public static TraceContext of(String traceparent) {
        return new TraceContext(traceparent, null);
    }

    public static TraceContext of(String traceparent, String tracestate) {
        return new TraceContext(traceparent, tracestate);
    }
}
