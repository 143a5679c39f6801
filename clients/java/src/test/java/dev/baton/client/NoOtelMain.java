package dev.baton.client;

/**
 * The client in a JVM without the OpenTelemetry jars (TracingTest starts it): runs one request against the
 * stub at args[0] with a trace context given by hand, and prints what it saw.
 */
public final class NoOtelMain {
    private NoOtelMain() {
    }

    public static void main(String[] args) {
        boolean api;
        try {
            Class.forName("io.opentelemetry.api.GlobalOpenTelemetry");
            api = true;
        } catch (ClassNotFoundException e) {
            api = false;
        }
        System.out.println("api=" + api + " none=" + (Tracing.DETECTED == Tracing.NONE));
        try (BatonClient c = BatonClient.builder(args[0]).build()) {
            RunReport r = c.run("L", w -> "seen " + w.request().traceparent(), RunOptions.of("r1").trace(TraceContext.of(args[1])));
            RunReport q = c.run("L", w -> null, RunOptions.of("r2"));
            System.out.println("handled=" + r.handled() + " " + q.status());
        }
    }
}
