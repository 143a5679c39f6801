package dev.baton.lock;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.logging.Logger;

import dev.baton.redis.LuaScript;
import dev.baton.redis.ScriptRunner;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Response;

/**
 * Two cross-lcid indexes per tenant, each one sorted set in its own slot: lcids that may need
 * rescue ({@code baton:<tenant>:claimable}, scored by when to look) and DEAD requests
 * ({@code baton:<tenant>:dead}, scored by when they died). They are hints written after the lcid's script, never the truth: every
 * use checks the lcid's own keys. A claim hint that is too early only costs a look; one that is
 * too late strands work, so claim hints carry the lcid's index version and the newest version
 * wins (lua/claim_index_set.lua), whatever order batches, connections and replicas deliver them in.
 */
@ApplicationScoped
public class WorkIndex {

    static String claimable(String tenant) {
        return "baton:" + tenant + ":claimable";
    }

    /**
     * The claim index's entry versions. Its hash tag is the whole name of the index key (which has
     * no braces), so both keys share one Cluster slot and a script may update them together.
     */
    static String claimableVersions(String tenant) {
        return "{" + claimable(tenant) + "}:versions";
    }

    static String dead(String tenant) {
        return "baton:" + tenant + ":dead";
    }

    private static final Logger LOG = Logger.getLogger(WorkIndex.class);

    /** One index entry as read. */
    record Entry(String member, long score) {
    }

    /** A claim hint: look at the lcid at {@code at} (ms, Redis clock), as of the lcid's index {@code version}. */
    record Hint(long at, long version) {

        /** Of two hints for one lcid, the newer one; for the same version, the earlier look. */
        static Hint newer(Hint a, Hint b) {
            if (a.version != b.version) {
                return a.version > b.version ? a : b;
            }
            return a.at <= b.at ? a : b;
        }
    }

    private final ScriptRunner redis;
    private final Vertx vertx;
    private final long batchMs;
    private final AtomicReference<Map<String, Map<String, Hint>>> pending = new AtomicReference<>(new ConcurrentHashMap<>());
    private final AtomicBoolean flushScheduled = new AtomicBoolean();

    public WorkIndex(ScriptRunner redis, Vertx vertx, BatonConfig config) {
        this.redis = redis;
        this.vertx = vertx;
        this.batchMs = Math.max(1, config.claims().hintBatch().toMillis());
    }

    /** Writes the hints a script asked for; a failure only costs a later rescue, so it is logged. */
    void record(String tenant, String lcid, ScriptStats stats) {
        if (stats.claimIndexAt() >= 0) {
            pending.get().computeIfAbsent(tenant, t -> new ConcurrentHashMap<>())
                    .merge(lcid, new Hint(stats.claimIndexAt(), stats.claimIndexVersion()), Hint::newer);
            if (flushScheduled.compareAndSet(false, true)) {
                vertx.setTimer(batchMs, id -> flushClaimHints());
            }
        }
        if (stats.deadRequestId() != null) {
            fireAndForget(redis.call(Command.ZADD, dead(tenant), Long.toString(System.currentTimeMillis()),
                    deadMember(lcid, stats.deadRequestId())), lcid);
        }
    }

    private void flushClaimHints() {
        flushScheduled.set(false);
        Map<String, Map<String, Hint>> batch = pending.getAndSet(new ConcurrentHashMap<>());
        batch.forEach((tenant, hints) -> fireAndForget(setClaimHints(tenant, hints),
                tenant + " (" + hints.size() + " lcids)"));
    }

    /** Writes each hint unless the index already holds a newer one for that lcid. */
    Uni<Response> setClaimHints(String tenant, Map<String, Hint> hints) {
        List<String> args = new ArrayList<>(hints.size() * 3);
        hints.forEach((lcid, hint) -> {
            args.add(lcid);
            args.add(Long.toString(hint.at()));
            args.add(Long.toString(hint.version()));
        });
        return redis.run(LuaScript.CLAIM_INDEX_SET, List.of(claimable(tenant), claimableVersions(tenant)), args);
    }

    Uni<List<Entry>> dueClaims(String tenant, int limit) {
        return redis.run(LuaScript.INDEX_DUE, List.of(claimable(tenant)), List.of(Integer.toString(limit)))
                .map(WorkIndex::entries);
    }

    /** A claim found the lcid held until {@code score}: look again then, unless a newer hint came meanwhile. */
    Uni<Void> rescore(String tenant, String lcid, long score, long version) {
        return setClaimHints(tenant, Map.of(lcid, new Hint(score, version))).replaceWithVoid();
    }

    /** A claim found the lcid idle: forget it, unless a newer hint came meanwhile. */
    Uni<Void> dropClaim(String tenant, String lcid, long version) {
        return redis.run(LuaScript.CLAIM_INDEX_DROP, List.of(claimable(tenant), claimableVersions(tenant)),
                List.of(lcid, Long.toString(version))).replaceWithVoid();
    }

    Uni<List<Entry>> newestDead(String tenant, int limit) {
        return redis.call(Command.ZREVRANGE, dead(tenant), "0", Integer.toString(limit - 1), "WITHSCORES")
                .map(WorkIndex::entries);
    }

    Uni<Void> removeDeadIfUnchanged(String tenant, Entry entry) {
        return removeIfUnchanged(dead(tenant), entry);
    }

    Uni<Void> forgetDead(String tenant, String lcid, String requestId) {
        return redis.call(Command.ZREM, dead(tenant), deadMember(lcid, requestId)).replaceWithVoid();
    }

    Uni<Void> dropDeadBefore(String tenant, long epochMs) {
        return redis.call(Command.ZREMRANGEBYSCORE, dead(tenant), "-inf", "(" + epochMs).replaceWithVoid();
    }

    /** lcids and requestIds never contain a space. */
    static String deadMember(String lcid, String requestId) {
        return lcid + " " + requestId;
    }

    private Uni<Void> removeIfUnchanged(String index, Entry entry) {
        return redis.run(LuaScript.INDEX_REMOVE_IF, List.of(index), List.of(entry.member(), Long.toString(entry.score())))
                .replaceWithVoid();
    }

    private static List<Entry> entries(Response flat) {
        List<Entry> entries = new ArrayList<>();
        // RESP2 answers WITHSCORES flat (member, score, ...); RESP3 as pairs.
        for (int i = 0; i < flat.size(); i++) {
            Response item = flat.get(i);
            if (item.type() == io.vertx.redis.client.ResponseType.MULTI) {
                entries.add(new Entry(item.get(0).toString(), (long) Double.parseDouble(item.get(1).toString())));
            } else {
                entries.add(new Entry(item.toString(), (long) Double.parseDouble(flat.get(++i).toString())));
            }
        }
        return entries;
    }

    private static void fireAndForget(Uni<Response> write, String lcid) {
        write.subscribe().with(ok -> { }, failure -> LOG.warnf("index hint for %s not written: %s", lcid,
                failure.getMessage()));
    }
}
