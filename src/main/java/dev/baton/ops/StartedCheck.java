package dev.baton.ops;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Startup;

import io.quarkus.runtime.StartupEvent;

/** Started = configuration checked and the HTTP server up (after {@link StartupChecks}). */
@Startup
@Singleton
public class StartedCheck implements HealthCheck {

    private volatile boolean started;

    void onStart(@Observes StartupEvent event) {
        started = true;
    }

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("baton-started").status(started).build();
    }
}
