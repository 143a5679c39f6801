package dev.baton.lock;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;

import dev.baton.redis.LockKeys;
import dev.baton.redis.LuaScript;
import dev.baton.redis.ScriptRunner;
import io.smallrye.mutiny.Uni;

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

    public LockCoordinator(ScriptRunner scripts, TokenGenerator tokens, BatonConfig config) {
        this.scripts = scripts;
        this.tokens = tokens;
        this.config = config;
    }

    public Uni<Outcome> acquire(String lcid, String requestId, String payloadJson, long leaseMs) {
        return scripts.run(LuaScript.ACQUIRE, LockKeys.of(lcid), List.of(
                requestId, tokens.newToken(), Long.toString(leaseMs), orNone(payloadJson),
                Integer.toString(config.queue().maxLength()), Integer.toString(config.maxAttempts()),
                resultRetentionMs(), idleRetentionMs()))
                .map(reply -> ScriptReplies.outcome(lcid, requestId, reply));
    }

    public Uni<Outcome> heartbeat(String lcid, String token, Long leaseMs) {
        return scripts.run(LuaScript.HEARTBEAT, LockKeys.of(lcid), List.of(
                token, leaseMs == null ? NONE : Long.toString(leaseMs)))
                .map(reply -> ScriptReplies.outcome(lcid, null, reply));
    }

    public Uni<Outcome> complete(String lcid, String token, String requestId, String resultJson) {
        return scripts.run(LuaScript.COMPLETE, LockKeys.of(lcid), List.of(
                token, requestId, orNone(resultJson), resultRetentionMs(), idleRetentionMs()))
                .map(reply -> ScriptReplies.outcome(lcid, requestId, reply));
    }

    public Uni<Outcome> abort(String lcid, String requestId, String token, boolean requeue, String reason) {
        return scripts.run(LuaScript.ABORT, LockKeys.of(lcid), List.of(
                requestId, orNone(token), requeue ? "1" : "0", orNone(reason),
                Integer.toString(config.maxAttempts()), resultRetentionMs(), idleRetentionMs()))
                .map(reply -> ScriptReplies.outcome(lcid, requestId, reply));
    }

    public Uni<LockView> viewLock(String lcid) {
        return scripts.run(LuaScript.VIEW_LOCK, LockKeys.of(lcid), List.of())
                .map(reply -> ScriptReplies.lockView(lcid, reply));
    }

    public Uni<RequestView> viewRequest(String lcid, String requestId) {
        return scripts.run(LuaScript.VIEW_REQUEST, LockKeys.of(lcid), List.of(requestId))
                .map(reply -> ScriptReplies.requestView(lcid, requestId, reply));
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
