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

    public LockCoordinator(ScriptRunner scripts, TokenGenerator tokens, BatonConfig config, LockEvents events) {
        this.scripts = scripts;
        this.tokens = tokens;
        this.config = config;
        this.events = events;
    }

    public Uni<Outcome> acquire(String lcid, String requestId, String payloadJson, long leaseMs) {
        return change(Operation.ACQUIRE, false, lcid, requestId, LuaScript.ACQUIRE, List.of(
                requestId, tokens.newToken(), Long.toString(leaseMs), orNone(payloadJson),
                Integer.toString(config.queue().maxLength()), Integer.toString(config.maxAttempts()),
                resultRetentionMs(), idleRetentionMs()));
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
                Integer.toString(config.maxAttempts()), resultRetentionMs(), idleRetentionMs()));
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

    /** Idle keys must outlive the results kept in them. */
    private String idleRetentionMs() {
        return Long.toString(Math.max(config.idleRetention().toMillis(), config.resultRetention().toMillis()));
    }

    private static String orNone(String value) {
        return value == null ? NONE : value;
    }
}
