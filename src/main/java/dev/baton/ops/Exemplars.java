package dev.baton.ops;

import java.util.Optional;

import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Alternative;
import jakarta.enterprise.inject.Produces;
import jakarta.interceptor.Interceptor;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import io.prometheus.client.exemplars.ExemplarSampler;
import io.quarkus.micrometer.runtime.export.exemplars.OpentelemetryExemplarSamplerProvider;

/**
 * Prometheus exemplars (the trace id of a call on its histogram bucket) only while tracing is on.
 * Quarkus installs its OpenTelemetry exemplar sampler whenever the extension is present, and the
 * sampler looks for a current span on every histogram observation: with the SDK disabled there is
 * never one, and the look-ups are service CPU spent on every call for nothing.
 */
public class Exemplars {

    @Produces
    @Alternative
    @Priority(Interceptor.Priority.APPLICATION)
    Optional<ExemplarSampler> exemplarSampler(@ConfigProperty(name = "quarkus.otel.sdk.disabled") boolean tracingOff) {
        return tracingOff ? Optional.empty() : new OpentelemetryExemplarSamplerProvider().exemplarSampler();
    }
}
