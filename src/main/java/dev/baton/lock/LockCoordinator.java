package dev.baton.lock;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;

import dev.baton.config.BatonConfig;
import dev.baton.lock.LockEvents.Operation;
import dev.baton.redis.IndexStore;
import dev.baton.redis.ScriptCall;
import dev.baton.redis.Wakeups;
import io.smallrye.mutiny.Uni;

/**
 * The protocol operations on one lcid of one tenant. Each one is exactly one script call: the
 * decision and every state change happen atomically inside Redis, never as read-then-write from
 * here. Inputs are expected to have passed {@link RequestRules}.
 */
@ApplicationScoped
public class LockCoordinator {

    private final LcidScripts scripts;
    private final TokenGenerator tokens;
    private final BatonConfig config;
    private final IndexStore index;
    private final LongPolls polls;

    LockCoordinator(LcidScripts scripts, TokenGenerator tokens, BatonConfig config, IndexStore index,
            LongPolls polls) {
        this.scripts = scripts;
        this.tokens = tokens;
        this.config = config;
        this.index = index;
        this.polls = polls;
    }

    /**
     * {@code waitMode}: only this caller does the request, in its turn (v1.1); else any holder
     * may (v1). With {@code waitMs}, a wait request that would be QUEUED holds the call until its turn: the
     * acquire is repeated on each wake-up and re-check, and the repeat that finds the turn picks it
     * up (ACQUIRED), exactly as the client's own repeat would. A handoff request ignores it.
     * {@code trace}: the submitting call's trace context, stored with a new request.
     */
    public Uni<Outcome> acquire(String tenant, String lcid, String requestId, String payloadJson, long leaseMs,
            boolean waitMode, long waitMs, int take, TraceContext trace) {
        if (!waitMode) {
            return acquireOnce(tenant, lcid, requestId, payloadJson, leaseMs, false, take, trace);
        }
        return polls.hold(Wakeups.key(tenant, lcid, requestId), waitMs,
                () -> acquireOnce(tenant, lcid, requestId, payloadJson, leaseMs, true, take, trace),
                outcome -> !(outcome instanceof Outcome.Queued));
    }

    private Uni<Outcome> acquireOnce(String tenant, String lcid, String requestId, String payloadJson, long leaseMs,
            boolean waitMode, int take, TraceContext trace) {
        return scripts.outcome(Operation.ACQUIRE, false, tenant, lcid, requestId, new ScriptCall.Acquire(requestId,
                tokens.newToken(), leaseMs, payloadJson, config.queue().maxLength(), config.maxAttempts(),
                Retention.result(config), Retention.idle(config), Retention.dead(config), waitMode,
                config.waiting().pickupMs(), take, trace.traceparent(), trace.tracestate()));
    }

    public Uni<Outcome> heartbeat(String tenant, String lcid, String token, Long leaseMs) {
        return scripts.outcome(Operation.HEARTBEAT, true, tenant, lcid, null, new ScriptCall.Heartbeat(token, leaseMs));
    }

    /**
     * Finishes the active request, or with {@code namedBatch} the whole active batch. {@code take}:
     * how many queued handoff requests the holder takes next, 0 when it did not say (one for a
     * handoff holder; a wait holder is handed handoff requests only when it asks).
     */
    public Uni<Outcome> complete(String tenant, String lcid, String token, List<ScriptCall.Completion> completed,
            boolean namedBatch, int take) {
        return scripts.outcome(Operation.COMPLETE, true, tenant, lcid, completed.get(0).requestId(),
                new ScriptCall.Complete(token, completed, namedBatch, Retention.result(config), Retention.idle(config),
                        take, tokens.newToken(), config.waiting().pickupMs()));
    }

    public Uni<Outcome> abort(String tenant, String lcid, String requestId, String token, boolean requeue,
            String reason) {
        return scripts.outcome(Operation.ABORT, token != null, tenant, lcid, requestId, new ScriptCall.Abort(requestId,
                token, requeue, reason, config.maxAttempts(), Retention.result(config), Retention.idle(config),
                Retention.dead(config), tokens.newToken(), config.waiting().pickupMs()));
    }

    /** Queues a DEAD request again, with a fresh attempt budget. */
    public Uni<Outcome> retry(String tenant, String lcid, String requestId) {
        return scripts.outcome(Operation.RETRY, false, tenant, lcid, requestId, new ScriptCall.Retry(requestId,
                config.queue().maxLength(), Retention.idle(config)))
                .call(outcome -> index.forgetDead(tenant, lcid, requestId).onFailure().recoverWithNull());
    }

    public Uni<LockView> viewLock(String tenant, String lcid) {
        return scripts.run(Operation.VIEW_LOCK, false, tenant, lcid, null, new ScriptCall.ViewLock(),
                reply -> ScriptReplies.lockView(lcid, reply));
    }

    /** A page of the queue, for operators: not counted as a lock operation in the metrics. */
    public Uni<QueueView> viewQueue(String tenant, String lcid, int offset, int limit, boolean payloads) {
        return scripts.peek(tenant, lcid, new ScriptCall.ViewQueue(offset, limit, payloads))
                .map(reply -> ScriptReplies.queueView(lcid, offset, reply));
    }

    /**
     * With {@code waitMs}, the call is held until the request has ended (DONE, ABORTED, DEAD): its
     * checks mark the request watched, so that its end wakes this call.
     */
    public Uni<RequestView> viewRequest(String tenant, String lcid, String requestId, long waitMs) {
        ScriptCall view = waitMs > 0 ? new ScriptCall.WatchRequest(requestId) : new ScriptCall.ViewRequest(requestId);
        return polls.hold(Wakeups.key(tenant, lcid, requestId), waitMs,
                () -> scripts.run(Operation.VIEW_REQUEST, false, tenant, lcid, requestId, view,
                        reply -> ScriptReplies.requestView(lcid, requestId, reply)),
                result -> result.state().ended());
    }
}
