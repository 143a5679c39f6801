package dev.baton.lock;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.logging.Logger;

import dev.baton.config.Tenants;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;

/**
 * Every instance looks at due claim-index entries now and then, so that lcids which went idle
 * leave the index (it must not grow with every lcid ever seen) and busy ones are re-scored to
 * their current lease end, even when no worker calls claims.
 */
@ApplicationScoped
public class ClaimIndexSweeper {

    private static final Logger LOG = Logger.getLogger(ClaimIndexSweeper.class);
    private static final int BATCH = 200;

    private final WorkCoordinator coordinator;
    private final Tenants tenants;

    public ClaimIndexSweeper(WorkCoordinator coordinator, Tenants tenants) {
        this.coordinator = coordinator;
        this.tenants = tenants;
    }

    @Scheduled(every = "${baton.claims.sweep-every}", delayed = "${baton.claims.sweep-every}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> sweep() {
        return Multi.createFrom().iterable(List.copyOf(tenants.all()))
                .onItem().transformToUniAndConcatenate(tenant -> coordinator.sweep(tenant, BATCH)
                        .onFailure().invoke(failure -> LOG.debugf("claim index sweep of %s skipped: %s", tenant,
                                failure.getMessage()))
                        .onFailure().recoverWithItem(0))
                .collect().asList()
                .invoke(checked -> LOG.debugf("claim index sweep checked %s entries", checked))
                .replaceWithVoid();
    }
}
