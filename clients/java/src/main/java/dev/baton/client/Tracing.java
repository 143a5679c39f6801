package dev.baton.client;

import java.util.List;
import java.util.concurrent.Callable;

/**
 * What the client does with OpenTelemetry, an optional dependency: {@link #DETECTED} is {@link OtelTracing}
 * when the application has the API on its class path, and {@link #NONE} otherwise.
 *
 * <p>OtelTracing is the only class that names an {@code io.opentelemetry} type, and it is first loaded after
 * the API was found, so without the jar every other class still links (ClientUnitTest scans the compiled
 * classes for it, and runs the client in a JVM without the jar).
 */
interface Tracing {
    /** No header of its own, and the handler runs as it is. */
    Tracing NONE = new Tracing() {
        @Override
        public TraceContext current() {
            return null;
        }

        @Override
        public <T> T work(String lcid, Long fence, List<WorkItem> items, Callable<T> handler) throws Exception {
            return handler.call();
        }

        @Override
        public <T> T workAll(List<String> lcids, List<Long> fences, List<WorkItem> items, Callable<T> handler)
                throws Exception {
            return handler.call();
        }
    };

    /** Decided once: whether the API is on the class path does not change while the client runs. */
    Tracing DETECTED = detect();

    /** The current span's context, W3C-formatted, or null when no valid span is current. */
    TraceContext current();

    /**
     * Runs {@code handler} in a new span {@code baton.work} that is current meanwhile, links to the trace
     * context each of {@code items} was submitted with, and records the handler's exception.
     *
     * @param fence null: no fence attribute
     */
    <T> T work(String lcid, Long fence, List<WorkItem> items, Callable<T> handler) throws Exception;

    /** {@link #work} for lockAll: its lcids and their fences, in lock order, as {@code baton.lcids} and {@code baton.fences}. */
    <T> T workAll(List<String> lcids, List<Long> fences, List<WorkItem> items, Callable<T> handler) throws Exception;

    private static Tracing detect() {
        try {
            Class.forName("io.opentelemetry.api.GlobalOpenTelemetry", false, Tracing.class.getClassLoader());
            return new OtelTracing();
        } catch (ClassNotFoundException | LinkageError absent) {
            // LinkageError: the API without its opentelemetry-context jar, or one too old for OtelTracing.
            return NONE;
        }
    }
}
