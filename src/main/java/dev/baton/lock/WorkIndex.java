package dev.baton.lock;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.function.BinaryOperator;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.logging.Logger;

import dev.baton.config.BatonConfig;
import dev.baton.redis.BackendUnavailableException;
import dev.baton.redis.IndexStore;
import dev.baton.redis.IndexStore.BusyHint;
import dev.baton.redis.IndexStore.ClaimHint;
import dev.baton.redis.ScriptStats;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;

/**
 * Writes the cross-lcid index hints that lcid scripts ask for (their stats tail) after the
 * script, since Redis Cluster keeps the indexes in other slots. A claim hint that is too early
 * only costs a look; one that is too late strands work, so hints carry the lcid's index version
 * and the newest wins, in a batch here as in Redis, whatever order batches, connections and
 * replicas deliver them in. Busy-index hints (for operators' listing of busy lcids) go the same
 * way. A write that fails because Redis is unavailable is retried for a minute.
 */
@ApplicationScoped
public class WorkIndex {

    private static final Logger LOG = Logger.getLogger(WorkIndex.class);
    private static final Duration RETRY_FIRST = Duration.ofMillis(200);
    private static final Duration RETRY_MAX = Duration.ofSeconds(5);
    private static final long RETRY_FOR_MS = 60_000;

    private final IndexStore store;
    private final Hints<ClaimHint> claims;
    private final Hints<BusyHint> busy;

    public WorkIndex(IndexStore store, Vertx vertx, BatonConfig config) {
        this.store = store;
        long batchMs = Math.max(1, config.claims().hintBatch().toMillis());
        this.claims = new Hints<>(vertx, batchMs, WorkIndex::newer, store::setClaimHints);
        this.busy = new Hints<>(vertx, batchMs, WorkIndex::newer, store::setBusyHints);
    }

    void record(String tenant, String lcid, ScriptStats stats) {
        if (stats.claimIndexAt() >= 0) {
            claims.add(tenant, lcid, new ClaimHint(lcid, stats.claimIndexAt(), stats.claimIndexVersion()));
        }
        if (stats.busySince() >= 0) {
            busy.add(tenant, lcid, new BusyHint(lcid, stats.busySince(), stats.busyVersion()));
        }
        for (String dead : stats.deadRequestIds()) {
            fireAndForget(store.addDead(tenant, lcid, dead), lcid);
        }
    }

    /** Of two hints for one lcid, the newer one; for the same version, the earlier look. */
    static ClaimHint newer(ClaimHint a, ClaimHint b) {
        if (a.version() != b.version()) {
            return a.version() > b.version() ? a : b;
        }
        return a.at() <= b.at() ? a : b;
    }

    /** Of two hints for one lcid, the newer one (versions of busy hints never repeat). */
    static BusyHint newer(BusyHint a, BusyHint b) {
        return a.version() >= b.version() ? a : b;
    }

    /**
     * Retried while Redis is unavailable (a failover, a restart): a hint that is never written
     * strands the lcid's queue until its next call. Retries are safe: a hint older than the one
     * in Redis is not written.
     */
    private static void fireAndForget(Uni<Void> write, String what) {
        write.onFailure(BackendUnavailableException.class).retry().withBackOff(RETRY_FIRST, RETRY_MAX).expireIn(RETRY_FOR_MS)
                .subscribe().with(ok -> { }, failure -> LOG.warnf("index hint for %s not written: %s", what,
                        failure.getMessage()));
    }

    /**
     * Hints of one index, collected for a batch window: per tenant, the newest per lcid, written
     * with one script call per tenant when the window ends.
     */
    private static final class Hints<H> {

        private final Vertx vertx;
        private final long batchMs;
        private final BinaryOperator<H> newer;
        private final BiFunction<String, Collection<H>, Uni<Void>> write;
        private final AtomicReference<Map<String, Map<String, H>>> pending = new AtomicReference<>(new ConcurrentHashMap<>());
        private final AtomicBoolean flushScheduled = new AtomicBoolean();

        Hints(Vertx vertx, long batchMs, BinaryOperator<H> newer, BiFunction<String, Collection<H>, Uni<Void>> write) {
            this.vertx = vertx;
            this.batchMs = batchMs;
            this.newer = newer;
            this.write = write;
        }

        void add(String tenant, String lcid, H hint) {
            pending.get().computeIfAbsent(tenant, t -> new ConcurrentHashMap<>()).merge(lcid, hint, newer);
            if (flushScheduled.compareAndSet(false, true)) {
                vertx.setTimer(batchMs, id -> flush());
            }
        }

        private void flush() {
            flushScheduled.set(false);
            Map<String, Map<String, H>> batch = pending.getAndSet(new ConcurrentHashMap<>());
            batch.forEach((tenant, hints) -> fireAndForget(write.apply(tenant, hints.values()),
                    tenant + " (" + hints.size() + " lcids)"));
        }
    }
}
