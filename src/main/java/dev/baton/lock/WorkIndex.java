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
 * use checks the lcid's own keys, and an entry is only dropped if nobody re-scored it meanwhile.
 */
@ApplicationScoped
public class WorkIndex {

    static String claimable(String tenant) {
        return "baton:" + tenant + ":claimable";
    }

    static String dead(String tenant) {
        return "baton:" + tenant + ":dead";
    }

    private static final Logger LOG = Logger.getLogger(WorkIndex.class);

    /** One index entry as read. */
    record Entry(String member, long score) {
    }

    /** Claim hints wait this long to be written together: one ZADD per tenant instead of one per grant. */
    private static final long BATCH_MS = 10;

    private final ScriptRunner redis;
    private final Vertx vertx;
    private final AtomicReference<Map<String, Map<String, Long>>> pending = new AtomicReference<>(new ConcurrentHashMap<>());
    private final AtomicBoolean flushScheduled = new AtomicBoolean();

    public WorkIndex(ScriptRunner redis, Vertx vertx) {
        this.redis = redis;
        this.vertx = vertx;
    }

    /** Writes the hints a script asked for; a failure only costs a later rescue, so it is logged. */
    void record(String tenant, String lcid, ScriptStats stats) {
        if (stats.claimIndexAt() >= 0) {
            pending.get().computeIfAbsent(tenant, t -> new ConcurrentHashMap<>())
                    .merge(lcid, stats.claimIndexAt(), Math::max);
            if (flushScheduled.compareAndSet(false, true)) {
                vertx.setTimer(BATCH_MS, id -> flushClaimHints());
            }
        }
        if (stats.deadRequestId() != null) {
            fireAndForget(redis.call(Command.ZADD, dead(tenant), Long.toString(System.currentTimeMillis()),
                    deadMember(lcid, stats.deadRequestId())), lcid);
        }
    }

    private void flushClaimHints() {
        flushScheduled.set(false);
        Map<String, Map<String, Long>> batch = pending.getAndSet(new ConcurrentHashMap<>());
        batch.forEach((tenant, hints) -> {
            List<String> args = new ArrayList<>(1 + hints.size() * 2);
            args.add(claimable(tenant));
            hints.forEach((lcid, score) -> {
                args.add(Long.toString(score));
                args.add(lcid);
            });
            fireAndForget(redis.call(Command.ZADD, args.toArray(String[]::new)), tenant + " (" + hints.size() + " lcids)");
        });
    }

    Uni<List<Entry>> dueClaims(String tenant, int limit) {
        return redis.run(LuaScript.INDEX_DUE, List.of(claimable(tenant)), List.of(Integer.toString(limit)))
                .map(WorkIndex::entries);
    }

    Uni<Void> rescore(String tenant, String lcid, long score) {
        return redis.call(Command.ZADD, claimable(tenant), "XX", Long.toString(score), lcid).replaceWithVoid();
    }

    Uni<Void> removeClaimIfUnchanged(String tenant, Entry entry) {
        return removeIfUnchanged(claimable(tenant), entry);
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
