package dev.baton.lock;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.logging.Logger;

import dev.baton.config.BatonConfig;
import dev.baton.redis.BackendUnavailableException;
import dev.baton.redis.IndexStore;
import dev.baton.redis.IndexStore.ClaimHint;
import dev.baton.redis.ScriptStats;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;

/**
 * Writes the cross-lcid index hints that lcid scripts ask for (their stats tail) after the
 * script, since Redis Cluster keeps the indexes in other slots. A claim hint that is too early
 * only costs a look; one that is too late strands work, so hints carry the lcid's index version
 * and the newest wins, in a batch here as in Redis, whatever order batches, connections and
 * replicas deliver them in. A write that fails because Redis is unavailable is retried for a minute.
 */
@ApplicationScoped
public class WorkIndex {

    private static final Logger LOG = Logger.getLogger(WorkIndex.class);
    private static final Duration RETRY_FIRST = Duration.ofMillis(200);
    private static final Duration RETRY_MAX = Duration.ofSeconds(5);
    private static final long RETRY_FOR_MS = 60_000;

    private final IndexStore store;
    private final Vertx vertx;
    private final long batchMs;
    private final AtomicReference<Map<String, Map<String, ClaimHint>>> pending = new AtomicReference<>(new ConcurrentHashMap<>());
    private final AtomicBoolean flushScheduled = new AtomicBoolean();

    public WorkIndex(IndexStore store, Vertx vertx, BatonConfig config) {
        this.store = store;
        this.vertx = vertx;
        this.batchMs = Math.max(1, config.claims().hintBatch().toMillis());
    }

    void record(String tenant, String lcid, ScriptStats stats) {
        if (stats.claimIndexAt() >= 0) {
            pending.get().computeIfAbsent(tenant, t -> new ConcurrentHashMap<>())
                    .merge(lcid, new ClaimHint(lcid, stats.claimIndexAt(), stats.claimIndexVersion()), WorkIndex::newer);
            if (flushScheduled.compareAndSet(false, true)) {
                vertx.setTimer(batchMs, id -> flushClaimHints());
            }
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

    private void flushClaimHints() {
        flushScheduled.set(false);
        Map<String, Map<String, ClaimHint>> batch = pending.getAndSet(new ConcurrentHashMap<>());
        batch.forEach((tenant, hints) -> fireAndForget(store.setClaimHints(tenant, hints.values()),
                tenant + " (" + hints.size() + " lcids)"));
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
}
