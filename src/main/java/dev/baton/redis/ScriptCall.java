package dev.baton.redis;

import java.util.ArrayList;
import java.util.List;

/**
 * One call of an lcid script with its arguments by name; {@link #argv()} lays them out as the
 * script's header lists ARGV. The service and the benchmark build their calls with these alone.
 * Absent optional texts travel as '' (the scripts' "none").
 */
public sealed interface ScriptCall {

    LuaScript script();

    List<String> argv();

    /**
     * lua/acquire.lua; {@code waitMode}: only its submitter does the request (its turn), else handoff;
     * {@code take}: how many queued handoff requests a rescue of a stranded queue hands the caller;
     * {@code traceparent} and {@code tracestate}: the submitting call's W3C trace context, stored
     * with a new request (null for none).
     */
    record Acquire(String requestId, String token, long leaseMs, String payloadJson, int queueMax, int maxAttempts,
            long resultRetentionMs, long idleRetentionMs, long deadRetentionMs, boolean waitMode, long pickupMs,
            int take, String traceparent, String tracestate) implements ScriptCall {

        /** One request at a time (v1), no trace context. */
        public Acquire(String requestId, String token, long leaseMs, String payloadJson, int queueMax, int maxAttempts,
                long resultRetentionMs, long idleRetentionMs, long deadRetentionMs, boolean waitMode, long pickupMs) {
            this(requestId, token, leaseMs, payloadJson, queueMax, maxAttempts, resultRetentionMs, idleRetentionMs,
                    deadRetentionMs, waitMode, pickupMs, 1, null, null);
        }

        public LuaScript script() {
            return LuaScript.ACQUIRE;
        }

        public List<String> argv() {
            return List.of(requestId, token, Long.toString(leaseMs), orNone(payloadJson), Integer.toString(queueMax),
                    Integer.toString(maxAttempts), Long.toString(resultRetentionMs), Long.toString(idleRetentionMs),
                    Long.toString(deadRetentionMs), waitMode ? "wait" : "handoff", Long.toString(pickupMs),
                    Integer.toString(take), orNone(traceparent), orNone(tracestate));
        }
    }

    /** One request a complete finishes, with its result JSON (null for none). */
    record Completion(String requestId, String resultJson) {
    }

    /**
     * lua/complete.lua; {@code completed}: the active request, or the whole active batch when
     * {@code namedBatch}; {@code take}: how many queued handoff requests the holder takes at
     * most, 0 when it did not say (1 for a handoff holder, none for a wait holder);
     * {@code turnToken}: the token of a turn this complete may grant.
     */
    record Complete(String token, List<Completion> completed, boolean namedBatch, long resultRetentionMs,
            long idleRetentionMs, int take, String turnToken, long pickupMs) implements ScriptCall {

        /** One request (v1); {@code take}: a wait holder takes one queued handoff request. */
        public Complete(String token, String requestId, String resultJson, long resultRetentionMs, long idleRetentionMs,
                boolean take, String turnToken, long pickupMs) {
            this(token, List.of(new Completion(requestId, resultJson)), false, resultRetentionMs, idleRetentionMs,
                    take ? 1 : 0, turnToken, pickupMs);
        }

        public LuaScript script() {
            return LuaScript.COMPLETE;
        }

        public List<String> argv() {
            List<String> argv = new ArrayList<>(7 + 2 * completed.size());
            argv.addAll(List.of(token, Long.toString(resultRetentionMs), Long.toString(idleRetentionMs),
                    Integer.toString(take), turnToken, Long.toString(pickupMs), namedBatch ? "1" : "0"));
            for (Completion completion : completed) {
                argv.add(completion.requestId());
                argv.add(orNone(completion.resultJson()));
            }
            return argv;
        }
    }

    /** lua/heartbeat.lua; a null lease keeps the one the lock was granted with. */
    record Heartbeat(String token, Long leaseMs) implements ScriptCall {
        public LuaScript script() {
            return LuaScript.HEARTBEAT;
        }

        public List<String> argv() {
            return List.of(token, leaseMs == null ? "" : Long.toString(leaseMs));
        }
    }

    /** lua/abort.lua; a null token withdraws a queued request. */
    record Abort(String requestId, String token, boolean requeue, String reason, int maxAttempts,
            long resultRetentionMs, long idleRetentionMs, long deadRetentionMs, String turnToken, long pickupMs)
            implements ScriptCall {
        public LuaScript script() {
            return LuaScript.ABORT;
        }

        public List<String> argv() {
            return List.of(requestId, orNone(token), requeue ? "1" : "0", orNone(reason), Integer.toString(maxAttempts),
                    Long.toString(resultRetentionMs), Long.toString(idleRetentionMs), Long.toString(deadRetentionMs),
                    turnToken, Long.toString(pickupMs));
        }
    }

    /** lua/claim.lua; the token is also the one of a turn the claim may grant; take as on acquire. */
    record Claim(String token, long leaseMs, int maxAttempts, long idleRetentionMs, long deadRetentionMs,
            long resultRetentionMs, long pickupMs, int take) implements ScriptCall {

        /** One request at a time (v1). */
        public Claim(String token, long leaseMs, int maxAttempts, long idleRetentionMs, long deadRetentionMs,
                long resultRetentionMs, long pickupMs) {
            this(token, leaseMs, maxAttempts, idleRetentionMs, deadRetentionMs, resultRetentionMs, pickupMs, 1);
        }

        public LuaScript script() {
            return LuaScript.CLAIM;
        }

        public List<String> argv() {
            return List.of(token, Long.toString(leaseMs), Integer.toString(maxAttempts), Long.toString(idleRetentionMs),
                    Long.toString(deadRetentionMs), Long.toString(resultRetentionMs), Long.toString(pickupMs),
                    Integer.toString(take));
        }
    }

    /** lua/claim_inspect.lua. */
    record ClaimInspect() implements ScriptCall {
        public LuaScript script() {
            return LuaScript.CLAIM_INSPECT;
        }

        public List<String> argv() {
            return List.of();
        }
    }

    /** lua/retry.lua. */
    record Retry(String requestId, int queueMax, long idleRetentionMs) implements ScriptCall {
        public LuaScript script() {
            return LuaScript.RETRY;
        }

        public List<String> argv() {
            return List.of(requestId, Integer.toString(queueMax), Long.toString(idleRetentionMs));
        }
    }

    /** lua/view_lock.lua. */
    record ViewLock() implements ScriptCall {
        public LuaScript script() {
            return LuaScript.VIEW_LOCK;
        }

        public List<String> argv() {
            return List.of();
        }
    }

    /** lua/view_request.lua. */
    record ViewRequest(String requestId) implements ScriptCall {
        public LuaScript script() {
            return LuaScript.VIEW_REQUEST;
        }

        public List<String> argv() {
            return List.of(requestId);
        }
    }

    /** lua/watch_request.lua: the view, for a long-poll that waits for the request's end. */
    record WatchRequest(String requestId) implements ScriptCall {
        public LuaScript script() {
            return LuaScript.WATCH_REQUEST;
        }

        public List<String> argv() {
            return List.of(requestId);
        }
    }

    /** lua/view_dead.lua. */
    record ViewDead(String requestId) implements ScriptCall {
        public LuaScript script() {
            return LuaScript.VIEW_DEAD;
        }

        public List<String> argv() {
            return List.of(requestId);
        }
    }

    /** lua/view_queue.lua: {@code limit} queued requests from position {@code offset} (from 0). */
    record ViewQueue(int offset, int limit, boolean payloads) implements ScriptCall {
        public LuaScript script() {
            return LuaScript.VIEW_QUEUE;
        }

        public List<String> argv() {
            return List.of(Integer.toString(offset), Integer.toString(limit), payloads ? "1" : "0");
        }
    }

    private static String orNone(String value) {
        return value == null ? "" : value;
    }
}
