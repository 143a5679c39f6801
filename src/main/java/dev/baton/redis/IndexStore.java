package dev.baton.redis;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Response;
import io.vertx.redis.client.ResponseType;

/**
 * The cross-lcid indexes of a tenant ({@link IndexKeys}): hints written after lcid scripts, never
 * the truth, since Redis Cluster keeps them in other slots than the lcids they name. Their users
 * check every entry against the lcid's own keys.
 */
@ApplicationScoped
public class IndexStore {

    /** One index entry as read: a member and its score (ms, Redis clock). */
    public record Entry(String member, long score) {
    }

    /** A hint for an lcid's entry in an index: its score, as of the lcid's {@code version}. */
    sealed interface Hint permits ClaimHint, BusyHint {
        String lcid();

        long score();

        long version();
    }

    /** Look at {@code lcid} at {@code at} (ms, Redis clock), as of the lcid's index {@code version}. */
    public record ClaimHint(String lcid, long at, long version) implements Hint {
        public long score() {
            return at;
        }
    }

    /** {@code lcid}'s holder has held it since {@code since} (ms, Redis clock; 0: it turned idle), as of {@code version}. */
    public record BusyHint(String lcid, long since, long version) implements Hint {
        public long score() {
            return since;
        }
    }

    /** A DEAD request as the dead-letter index lists it. */
    public record DeadEntry(String lcid, String requestId, long diedAt) {
    }

    private final ScriptRunner redis;

    public IndexStore(ScriptRunner redis) {
        this.redis = redis;
    }

    /** Writes each hint unless the index already holds a newer one for that lcid (lua/claim_index_set.lua). */
    public Uni<Void> setClaimHints(String tenant, Collection<ClaimHint> hints) {
        return setHints(LuaScript.CLAIM_INDEX_SET, claimIndex(tenant), hints);
    }

    /** Forgets an idle lcid, unless a hint newer than {@code version} came meanwhile. */
    public Uni<Void> dropClaim(String tenant, String lcid, long version) {
        return redis.run(LuaScript.CLAIM_INDEX_DROP, claimIndex(tenant), List.of(lcid, Long.toString(version)))
                .replaceWithVoid();
    }

    /** Claim-index entries whose time has come, oldest first. */
    public Uni<List<Entry>> dueClaims(String tenant, int limit) {
        return redis.runRaw(LuaScript.INDEX_DUE, List.of(IndexKeys.claimable(tenant)),
                List.of(Integer.toString(limit))).map(IndexStore::entries);
    }

    /** Due claim-index entries of lcids that start with {@code prefix}, among the {@code scan} oldest due ones. */
    public Uni<List<Entry>> dueClaims(String tenant, int limit, String prefix, int scan) {
        return redis.runRaw(LuaScript.INDEX_DUE, List.of(IndexKeys.claimable(tenant)),
                List.of(Integer.toString(limit), prefix, Integer.toString(scan))).map(IndexStore::entries);
    }

    /** Writes each busy-index hint unless the index holds a newer one for that lcid (lua/busy_index_set.lua). */
    public Uni<Void> setBusyHints(String tenant, Collection<BusyHint> hints) {
        return setHints(LuaScript.BUSY_INDEX_SET, busyIndex(tenant), hints);
    }

    /** One script call for a batch of hints, as triples lcid, score, version. */
    private Uni<Void> setHints(LuaScript script, List<String> keys, Collection<? extends Hint> hints) {
        List<String> args = new ArrayList<>(hints.size() * 3);
        for (Hint hint : hints) {
            args.add(hint.lcid());
            args.add(Long.toString(hint.score()));
            args.add(Long.toString(hint.version()));
        }
        return redis.run(script, keys, args).replaceWithVoid();
    }

    /** Busy-index entries from {@code offset}, longest held first. */
    public Uni<List<Entry>> busy(String tenant, int offset, int limit) {
        return redis.call(Command.ZRANGE, IndexKeys.busy(tenant), Integer.toString(offset),
                Integer.toString(offset + limit - 1), "WITHSCORES").map(IndexStore::entries);
    }

    public Uni<Long> busyCount(String tenant) {
        return redis.call(Command.ZCARD, IndexKeys.busy(tenant)).map(Response::toLong);
    }

    /** Drops an entry a listing found idle, unless it was re-scored since (lua/busy_index_drop.lua). */
    public Uni<Void> dropBusyIfUnchanged(String tenant, Entry entry) {
        return redis.run(LuaScript.BUSY_INDEX_DROP, busyIndex(tenant),
                List.of(entry.member(), Long.toString(entry.score()))).replaceWithVoid();
    }

    public Uni<Void> addDead(String tenant, String lcid, String requestId) {
        return redis.run(LuaScript.INDEX_ADD_NOW, List.of(IndexKeys.dead(tenant)),
                List.of(IndexKeys.deadMember(lcid, requestId))).replaceWithVoid();
    }

    public Uni<List<DeadEntry>> newestDead(String tenant, int limit) {
        return redis.call(Command.ZREVRANGE, IndexKeys.dead(tenant), "0", Integer.toString(limit - 1), "WITHSCORES")
                .map(reply -> entries(reply).stream().map(entry -> {
                    int space = entry.member().indexOf(' ');
                    return new DeadEntry(entry.member().substring(0, space), entry.member().substring(space + 1),
                            entry.score());
                }).toList());
    }

    /** Drops a dead-letter entry unless the request died again (and was re-scored) since it was read. */
    public Uni<Void> removeDeadIfUnchanged(String tenant, DeadEntry entry) {
        return redis.run(LuaScript.INDEX_REMOVE_IF, List.of(IndexKeys.dead(tenant)),
                List.of(IndexKeys.deadMember(entry.lcid(), entry.requestId()), Long.toString(entry.diedAt())))
                .replaceWithVoid();
    }

    public Uni<Void> forgetDead(String tenant, String lcid, String requestId) {
        return redis.call(Command.ZREM, IndexKeys.dead(tenant), IndexKeys.deadMember(lcid, requestId))
                .replaceWithVoid();
    }

    /** Drops dead-letter entries older than {@code retentionMs} by the Redis clock. */
    public Uni<Void> dropDeadOlderThan(String tenant, long retentionMs) {
        return redis.run(LuaScript.INDEX_DROP_OLDER, List.of(IndexKeys.dead(tenant)),
                List.of(Long.toString(retentionMs))).replaceWithVoid();
    }

    private static List<String> busyIndex(String tenant) {
        return List.of(IndexKeys.busy(tenant), IndexKeys.busyVersions(tenant));
    }

    private static List<String> claimIndex(String tenant) {
        return List.of(IndexKeys.claimable(tenant), IndexKeys.claimableVersions(tenant));
    }

    private static List<Entry> entries(Response flat) {
        List<Entry> entries = new ArrayList<>();
        // RESP2 answers WITHSCORES flat (member, score, ...); RESP3 as pairs.
        for (int i = 0; i < flat.size(); i++) {
            Response item = flat.get(i);
            if (item.type() == ResponseType.MULTI) {
                entries.add(new Entry(item.get(0).toString(), (long) Double.parseDouble(item.get(1).toString())));
            } else {
                entries.add(new Entry(item.toString(), (long) Double.parseDouble(flat.get(++i).toString())));
            }
        }
        return entries;
    }
}
