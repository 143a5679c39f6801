package dev.baton.lock;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.logging.Logger;

import io.quarkus.scheduler.Scheduled;
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

    private final LockCoordinator coordinator;

    public ClaimIndexSweeper(LockCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Scheduled(every = "${baton.claims.sweep-every}", delayed = "${baton.claims.sweep-every}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> sweep() {
        return coordinator.sweepClaimIndex(BATCH)
                .invoke(checked -> LOG.debugf("claim index sweep checked %d entries", checked))
                .onFailure().invoke(failure -> LOG.debugf("claim index sweep skipped: %s", failure.getMessage()))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }
}
