package dev.baton.ops;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

import dev.baton.redis.ScriptRunner;
import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;

/**
 * Ready = Redis answers and holds every Baton script (loading any it lost, e.g. after a
 * restart), so a pod that cannot serve locks gets no traffic. Not part of liveness: a Redis
 * outage must not restart every pod.
 */
@Readiness
@ApplicationScoped
public class ReadinessCheck implements AsyncHealthCheck {

    private final ScriptRunner scripts;

    public ReadinessCheck(ScriptRunner scripts) {
        this.scripts = scripts;
    }

    @Override
    public Uni<HealthCheckResponse> call() {
        return scripts.ensureLoaded()
                .map(loaded -> HealthCheckResponse.named("baton-lock-store").up().withData("scripts", loaded).build())
                .onFailure().recoverWithItem(failure -> HealthCheckResponse.named("baton-lock-store").down()
                        .withData("reason", String.valueOf(failure.getMessage())).build());
    }
}
