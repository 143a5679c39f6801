package dev.baton.lock;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import jakarta.enterprise.context.ApplicationScoped;

import dev.baton.lock.LockEvents.Operation;
import dev.baton.redis.LockKeys;
import dev.baton.redis.LuaScript;
import dev.baton.redis.ScriptRunner;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Response;

/**
 * The protocol operations. Each one is exactly one script call: the decision and every state
 * change happen atomically inside Redis, never as read-then-write from here. Inputs are expected
 * to have passed {@link RequestRules}.
 */
@ApplicationScoped
public class LockCoordinator {

    private static final String NONE = "";

    private final ScriptRunner scripts;
    private final TokenGenerator tokens;
    private final BatonConfig config;
    private final LockEvents events;
    private final WorkIndex index;

    public LockCoordinator(ScriptRunner scripts, TokenGenerator tokens, BatonConfig config, LockEvents events,
            WorkIndex index) {
        this.scripts = scripts;
        this.tokens = tokens;
        this.config = config;
        this.events = events;
        this.index = index;
    }

    public Uni<Outcome> acquire(String lcid, String requestId, String payloadJson, long leaseMs) {
        return change(Operation.ACQUIRE, false, lcid, requestId, LuaScript.ACQUIRE, List.of(
                requestId, tokens.newToken(), Long.toString(leaseMs), orNone(payloadJson),
                Integer.toString(config.queue().maxLength()), Integer.toString(config.maxAttempts()),
                resultRetentionMs(), idleRetentionMs(), deadRetentionMs()));
    }

    public Uni<Outcome> heartbeat(String lcid, String token, Long leaseMs) {
        return change(Operation.HEARTBEAT, true, lcid, null, LuaScript.HEARTBEAT, List.of(
                token, leaseMs == null ? NONE : Long.toString(leaseMs)));
    }

    public Uni<Outcome> complete(String lcid, String token, String requestId, String resultJson) {
        return change(Operation.COMPLETE, true, lcid, requestId, LuaScript.COMPLETE, List.of(
                token, requestId, orNone(resultJson), resultRetentionMs(), idleRetentionMs()));
    }

    public Uni<Outcome> abort(String lcid, String requestId, String token, boolean requeue, String reason) {
        return change(Operation.ABORT, token != null, lcid, requestId, LuaScript.ABORT, List.of(
                requestId, orNone(token), requeue ? "1" : "0", orNone(reason),
                Integer.toString(config.maxAttempts()), resultRetentionMs(), idleRetentionMs(), deadRetentionMs()));
    }

    /** Queues a DEAD request again, with a fresh attempt budget. */
    public Uni<Outcome> retry(String lcid, String requestId) {
        return change(Operation.RETRY, false, lcid, requestId, LuaScript.RETRY, List.of(
                requestId, Integer.toString(config.queue().maxLength()), idleRetentionMs()))
                .call(outcome -> index.forgetDead(lcid, requestId).onFailure().recoverWithNull());
    }

    /**
     * Orphaned work of any lcid: the lock of an lcid whose requests wait with no live holder, as
     * NEXT, or nothing. Walks the due entries of the claim index, checking each against the
     * lcid's own keys; entries that were stale are re-scored or dropped on the way.
     */
    public Uni<java.util.Optional<Outcome>> claim(long leaseMs) {
        return index.dueClaims(config.claims().candidates())
                .chain(candidates -> claimFirst(candidates, 0, leaseMs));
    }

    private Uni<java.util.Optional<Outcome>> claimFirst(List<WorkIndex.Entry> candidates, int i, long leaseMs) {
        if (i >= candidates.size()) {
            return Uni.createFrom().item(java.util.Optional.empty());
        }
        WorkIndex.Entry candidate = candidates.get(i);
        String lcid = candidate.member();
        return observed(Operation.CLAIM, true, LuaScript.CLAIM, lcid, List.of("grant", tokens.newToken(),
                Long.toString(leaseMs), Integer.toString(config.maxAttempts()), idleRetentionMs(), deadRetentionMs()),
                reply -> ScriptReplies.claim(lcid, reply))
                .chain(answer -> {
                    if (answer instanceof ClaimAnswer.Claimed claimed) {
                        return Uni.createFrom().item(java.util.Optional.<Outcome>of(claimed.next()));
                    }
                    return tidy(candidate, answer).chain(() -> claimFirst(candidates, i + 1, leaseMs));
                });
    }

    /** Looks at due claim-index entries without taking work: keeps the index small and current. */
    public Uni<Integer> sweepClaimIndex(int limit) {
        return index.dueClaims(limit).chain(entries -> {
            List<Uni<Void>> checks = new java.util.ArrayList<>();
            for (WorkIndex.Entry entry : entries) {
                checks.add(scripts.run(LuaScript.CLAIM, LockKeys.of(entry.member()), List.of("inspect", NONE, "0",
                        "0", "0", "0"))
                        .map(reply -> ScriptReplies.claim(entry.member(), reply))
                        .chain(answer -> tidy(entry, answer)));
            }
            return checks.isEmpty() ? Uni.createFrom().item(0)
                    : Uni.join().all(checks).andCollectFailures().map(done -> entries.size());
        }).call(() -> index.dropDeadBefore(System.currentTimeMillis() - config.deadRetention().toMillis()));
    }

    private Uni<Void> tidy(WorkIndex.Entry entry, ClaimAnswer answer) {
        if (answer instanceof ClaimAnswer.Busy busy) {
            return index.rescore(entry.member(), busy.leaseEndsAt());
        }
        if (answer instanceof ClaimAnswer.Idle) {
            return index.removeClaimIfUnchanged(entry);
        }
        return Uni.createFrom().voidItem();
    }

    /** The newest DEAD requests, each checked against its lcid; stale index entries are dropped. */
    public Uni<List<DeadLetter>> deadLetters(int limit) {
        return index.newestDead(limit).chain(entries -> {
            if (entries.isEmpty()) {
                return Uni.createFrom().item(List.<DeadLetter>of());
            }
            List<Uni<DeadLetter>> reads = new java.util.ArrayList<>();
            for (WorkIndex.Entry entry : entries) {
                int space = entry.member().indexOf(' ');
                String lcid = entry.member().substring(0, space);
                String requestId = entry.member().substring(space + 1);
                reads.add(scripts.run(LuaScript.VIEW_DEAD, LockKeys.of(lcid), List.of(requestId))
                        .map(reply -> ScriptReplies.deadLetter(lcid, requestId, entry.score(), reply))
                        .call(letter -> letter == null ? index.removeDeadIfUnchanged(entry)
                                : Uni.createFrom().voidItem()));
            }
            return Uni.join().all(reads).andFailFast()
                    .map(letters -> letters.stream().filter(java.util.Objects::nonNull).toList());
        });
    }

    public Uni<LockView> viewLock(String lcid) {
        return observed(Operation.VIEW_LOCK, false, LuaScript.VIEW_LOCK, lcid, List.of(),
                reply -> ScriptReplies.lockView(lcid, reply));
    }

    public Uni<RequestView> viewRequest(String lcid, String requestId) {
        return observed(Operation.VIEW_REQUEST, false, LuaScript.VIEW_REQUEST, lcid, List.of(requestId),
                reply -> ScriptReplies.requestView(lcid, requestId, reply));
    }

    private Uni<Outcome> change(Operation operation, boolean byHolder, String lcid, String requestId,
            LuaScript script, List<String> args) {
        return observed(operation, byHolder, script, lcid, args,
                reply -> ScriptReplies.outcome(lcid, requestId, reply));
    }

    /** Runs the script, parses its reply, and reports the operation to {@link LockEvents}. */
    private <T> Uni<T> observed(Operation operation, boolean byHolder, LuaScript script, String lcid,
            List<String> args, Function<Response, T> parse) {
        AtomicReference<ScriptStats> stats = new AtomicReference<>(ScriptStats.NONE);
        return Uni.createFrom().deferred(() -> {
            long start = System.nanoTime();
            return scripts.run(script, LockKeys.of(lcid), args)
                    .invoke(reply -> {
                        if (script.changesState()) {
                            stats.set(ScriptReplies.stats(reply));
                            index.record(lcid, stats.get());
                        }
                    })
                    .map(parse)
                    .onItemOrFailure().invoke((item, failure) -> events.completed(operation,
                            Duration.ofNanos(System.nanoTime() - start),
                            item instanceof Outcome outcome ? outcome : null, failure, stats.get(), byHolder));
        });
    }

    private String resultRetentionMs() {
        return Long.toString(config.resultRetention().toMillis());
    }

    /** The scripts keep an idle lcid at least until its last kept record is due (lua/lib.lua touch). */
    private String idleRetentionMs() {
        return Long.toString(config.idleRetention().toMillis());
    }

    private String deadRetentionMs() {
        return Long.toString(config.deadRetention().toMillis());
    }

    private static String orNone(String value) {
        return value == null ? NONE : value;
    }
}
