package dev.baton.testing;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/** Tracing on, every call sampled, spans into {@link SpanExporterProducer}'s in-memory exporter. */
public class TracingProfile implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("quarkus.otel.sdk.disabled", "false", "quarkus.otel.traces.sampler.arg", "1.0");
    }
}
