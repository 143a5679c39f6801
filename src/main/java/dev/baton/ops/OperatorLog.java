package dev.baton.ops;

import java.util.ArrayList;
import java.util.List;

import org.jboss.logging.Logger;
import org.jboss.logging.MDC;

import dev.baton.lock.CallContext;
import dev.baton.lock.LockEvents.Operation;
import dev.baton.lock.LockProblem;
import dev.baton.lock.ProblemCode;
import dev.baton.redis.ScriptStats;

/**
 * The lock events an operator needs to hear of, one line each, with the lock's fields (tenant,
 * lcid, requestId) and the call's trace (traceId, spanId) in the MDC, so that a JSON log line can
 * be searched by them: requests declared DEAD, requests requeued because their holder's lease ran
 * out, a holder that finds its lease lost. Normal traffic logs nothing. Never a token, a payload
 * or a result: only names and counts.
 */
final class OperatorLog {

    private static final Logger LOG = Logger.getLogger(OperatorLog.class);
    private static final String[] FIELDS = { "tenant", "lcid", "requestId", "traceId", "spanId" };

    private OperatorLog() {
    }

    static void completed(Operation operation, CallContext call, Throwable failure, ScriptStats stats) {
        for (String dead : stats.deadRequestIds()) {
            log(Logger.Level.WARN, call, dead, "Request %s on %s is DEAD: its last attempt ended without a complete."
                    + " It waits in GET /v1/dead-letters for an operator to retry it.", dead, call.lcid());
        }
        // An abort with requeue is the holder's own choice; anything else requeued lost its holder.
        if (stats.requeued() > 0 && operation != Operation.ABORT) {
            log(Logger.Level.INFO, call, null, "%d request(s) on %s requeued: their holder's lease ran out before"
                    + " it completed them", stats.requeued(), call.lcid());
        }
        if (failure instanceof LockProblem problem && problem.code() == ProblemCode.LOCK_LOST) {
            log(Logger.Level.INFO, call, null, "A %s on %s came with a token that no longer holds the lock (its lease"
                    + " ran out, or the lock was handed on): that holder's work may be done again by the next one."
                    + " Heartbeat more often or lengthen the lease.", operation.label(), call.lcid());
        }
    }

    /**
     * Sets the fields for one line and puts back what was there: on a Vert.x thread the MDC is
     * the current context's, which may be a call's with its own traceId.
     */
    private static void log(Logger.Level level, CallContext call, String requestId, String format, Object... args) {
        String[] values = { call.tenant(), call.lcid(), requestId != null ? requestId : call.requestId(),
                call.traceId(), call.spanId() };
        List<Object> before = new ArrayList<>(FIELDS.length);
        for (int i = 0; i < FIELDS.length; i++) {
            before.add(MDC.get(FIELDS[i]));
            if (values[i] != null) {
                MDC.put(FIELDS[i], values[i]);
            } else {
                MDC.remove(FIELDS[i]);
            }
        }
        try {
            LOG.logf(level, format, args);
        } finally {
            for (int i = 0; i < FIELDS.length; i++) {
                if (before.get(i) != null) {
                    MDC.put(FIELDS[i], before.get(i));
                } else {
                    MDC.remove(FIELDS[i]);
                }
            }
        }
    }
}
