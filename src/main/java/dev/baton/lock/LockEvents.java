package dev.baton.lock;

import java.time.Duration;

import dev.baton.redis.ScriptStats;

/**
 * Observer of protocol operations, so operations concerns (metrics) stay out of the protocol.
 * Called once per operation that reached Redis, with the outcome or the failure.
 */
public interface LockEvents {

    /** The operations observed, as they are named in metrics. */
    enum Operation {
        ACQUIRE, HEARTBEAT, COMPLETE, ABORT, CLAIM, RETRY, VIEW_LOCK, VIEW_REQUEST;

        public String label() {
            return name().toLowerCase();
        }
    }

    /**
     * @param call which lock the operation was about, and its trace
     * @param outcome the outcome, or null when the operation failed
     * @param failure the failure (a {@link LockProblem} or a backend failure), or null
     * @param byHolder for ABORT: whether the holder (with token) aborted, else a waiter withdrew
     */
    void completed(Operation operation, CallContext call, Duration took, Outcome outcome, Throwable failure,
            ScriptStats stats, boolean byHolder);

    /**
     * A holder renewed its lease after more than half of it had run ({@code afterMs} of
     * {@code leaseMs}): its heartbeats are too far apart for the lease.
     */
    default void lateHeartbeat(String tenant, long afterMs, long leaseMs) {
    }

    /** A long-poll was answered because of a wake-up, {@code took} after the wake-up arrived here. */
    default void longPollWoken(Duration took) {
    }

    /** A re-check found a change that no wake-up had announced: a notification was lost. */
    default void longPollMissedWake() {
    }
}
