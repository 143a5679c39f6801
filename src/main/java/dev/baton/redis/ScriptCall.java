package dev.baton.redis;

import java.util.List;

/**
 * One call of an lcid script with its arguments by name; {@link #argv()} lays them out as the
 * script's header lists ARGV. The service and the benchmark build their calls with these alone.
 * Absent optional texts travel as '' (the scripts' "none").
 */
public sealed interface ScriptCall {

    LuaScript script();

    List<String> argv();

    /** lua/acquire.lua; {@code waitMode}: only its submitter does the request (its turn), else handoff. */
    record Acquire(String requestId, String token, long leaseMs, String payloadJson, int queueMax, int maxAttempts,
            long resultRetentionMs, long idleRetentionMs, long deadRetentionMs, boolean waitMode, long pickupMs)
            implements ScriptCall {
        public LuaScript script() {
            return LuaScript.ACQUIRE;
        }

        public List<String> argv() {
            return List.of(requestId, token, Long.toString(leaseMs), orNone(payloadJson), Integer.toString(queueMax),
                    Integer.toString(maxAttempts), Long.toString(resultRetentionMs), Long.toString(idleRetentionMs),
                    Long.toString(deadRetentionMs), waitMode ? "wait" : "handoff", Long.toString(pickupMs));
        }
    }

    /**
     * lua/complete.lua; {@code take}: the holder takes queued handoff requests (always so for a
     * handoff holder); {@code turnToken}: the token of a turn this complete may grant.
     */
    record Complete(String token, String requestId, String resultJson, long resultRetentionMs, long idleRetentionMs,
            boolean take, String turnToken, long pickupMs) implements ScriptCall {
        public LuaScript script() {
            return LuaScript.COMPLETE;
        }

        public List<String> argv() {
            return List.of(token, requestId, orNone(resultJson), Long.toString(resultRetentionMs),
                    Long.toString(idleRetentionMs), take ? "1" : "0", turnToken, Long.toString(pickupMs));
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

    /** lua/claim.lua; the token is also the one of a turn the claim may grant. */
    record Claim(String token, long leaseMs, int maxAttempts, long idleRetentionMs, long deadRetentionMs,
            long resultRetentionMs, long pickupMs) implements ScriptCall {
        public LuaScript script() {
            return LuaScript.CLAIM;
        }

        public List<String> argv() {
            return List.of(token, Long.toString(leaseMs), Integer.toString(maxAttempts), Long.toString(idleRetentionMs),
                    Long.toString(deadRetentionMs), Long.toString(resultRetentionMs), Long.toString(pickupMs));
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

    /** lua/view_dead.lua. */
    record ViewDead(String requestId) implements ScriptCall {
        public LuaScript script() {
            return LuaScript.VIEW_DEAD;
        }

        public List<String> argv() {
            return List.of(requestId);
        }
    }

    private static String orNone(String value) {
        return value == null ? "" : value;
    }
}
