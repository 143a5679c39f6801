package dev.baton.lock;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;

import dev.baton.lock.LockEvents.Operation;
import dev.baton.redis.LuaScript;
import io.smallrye.mutiny.Uni;

/**
 * The protocol operations on one lcid of one tenant. Each one is exactly one script call: the
 * decision and every state change happen atomically inside Redis, never as read-then-write from
 * here. Inputs are expected to have passed {@link RequestRules}.
 */
@ApplicationScoped
public class LockCoordinator {

    private static final String NONE = "";

    private final LcidScripts scripts;
    private final TokenGenerator tokens;
    private final BatonConfig config;
    private final WorkIndex index;

    LockCoordinator(LcidScripts scripts, TokenGenerator tokens, BatonConfig config, WorkIndex index) {
        this.scripts = scripts;
        this.tokens = tokens;
        this.config = config;
        this.index = index;
    }

    public Uni<Outcome> acquire(String tenant, String lcid, String requestId, String payloadJson, long leaseMs) {
        return scripts.outcome(Operation.ACQUIRE, false, tenant, lcid, requestId, LuaScript.ACQUIRE, List.of(
                requestId, tokens.newToken(), Long.toString(leaseMs), orNone(payloadJson),
                Integer.toString(config.queue().maxLength()), Integer.toString(config.maxAttempts()),
                Retention.result(config), Retention.idle(config), Retention.dead(config)));
    }

    public Uni<Outcome> heartbeat(String tenant, String lcid, String token, Long leaseMs) {
        return scripts.outcome(Operation.HEARTBEAT, true, tenant, lcid, null, LuaScript.HEARTBEAT, List.of(
                token, leaseMs == null ? NONE : Long.toString(leaseMs)));
    }

    public Uni<Outcome> complete(String tenant, String lcid, String token, String requestId, String resultJson) {
        return scripts.outcome(Operation.COMPLETE, true, tenant, lcid, requestId, LuaScript.COMPLETE, List.of(
                token, requestId, orNone(resultJson), Retention.result(config), Retention.idle(config)));
    }

    public Uni<Outcome> abort(String tenant, String lcid, String requestId, String token, boolean requeue,
            String reason) {
        return scripts.outcome(Operation.ABORT, token != null, tenant, lcid, requestId, LuaScript.ABORT, List.of(
                requestId, orNone(token), requeue ? "1" : "0", orNone(reason),
                Integer.toString(config.maxAttempts()), Retention.result(config), Retention.idle(config),
                Retention.dead(config)));
    }

    /** Queues a DEAD request again, with a fresh attempt budget. */
    public Uni<Outcome> retry(String tenant, String lcid, String requestId) {
        return scripts.outcome(Operation.RETRY, false, tenant, lcid, requestId, LuaScript.RETRY, List.of(
                requestId, Integer.toString(config.queue().maxLength()), Retention.idle(config)))
                .call(outcome -> index.forgetDead(tenant, lcid, requestId).onFailure().recoverWithNull());
    }

    public Uni<LockView> viewLock(String tenant, String lcid) {
        return scripts.run(Operation.VIEW_LOCK, false, tenant, lcid, LuaScript.VIEW_LOCK, List.of(),
                reply -> ScriptReplies.lockView(lcid, reply));
    }

    public Uni<RequestView> viewRequest(String tenant, String lcid, String requestId) {
        return scripts.run(Operation.VIEW_REQUEST, false, tenant, lcid, LuaScript.VIEW_REQUEST, List.of(requestId),
                reply -> ScriptReplies.requestView(lcid, requestId, reply));
    }

    private static String orNone(String value) {
        return value == null ? NONE : value;
    }
}
