package dev.baton.ops;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

import dev.baton.redis.LayoutVersion;
import dev.baton.redis.ScriptRunner;
import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;

/**
 * Ready = Redis answers, holds Baton's data in the layout this release reads (checked on every
 * probe, see {@link LayoutVersion}) and holds every Baton script (loading any it lost, e.g. after
 * a restart), so a pod that cannot serve locks gets no traffic. Not part of liveness: a Redis
 * outage must not restart every pod.
 */
@Readiness
@ApplicationScoped
public class ReadinessCheck implements AsyncHealthCheck {

    private final ScriptRunner scripts;
    private final LayoutVersion layout;

    public ReadinessCheck(ScriptRunner scripts, LayoutVersion layout) {
        this.scripts = scripts;
        this.layout = layout;
    }

    @Override
    public Uni<HealthCheckResponse> call() {
        return layout.check().chain(scripts::ensureLoaded)
                .map(loaded -> HealthCheckResponse.named("baton-lock-store").up().withData("scripts", loaded)
                        .withData("layout", LayoutVersion.CURRENT).build())
                .onFailure().recoverWithItem(failure -> HealthCheckResponse.named("baton-lock-store").down()
                        .withData("reason", String.valueOf(failure.getMessage())).build());
    }
}
