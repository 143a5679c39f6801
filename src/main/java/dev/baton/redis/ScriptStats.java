package dev.baton.redis;

import java.util.List;

/**
 * What a state-changing script did besides its answer: the last element of its reply, written
 * by {@code with_stats} in lua/includes/stats.lua in the order of these components. Requests it put back in
 * the queue or declared DEAD (a holder's lease ran out, or an abort with requeue), how long the
 * request it activated had waited, how long the request it completed was held (-1 when not
 * applicable), when the lcid should be looked at by claims (-1: no hint) and that hint's version
 * (newer versions win in the claim index, whatever order hints arrive in), and the requests it
 * declared DEAD, and how many wait-mode turns it ended unclaimed (PICKUP_TIMEOUT); for the busy
 * index: since when (ms) the lcid's new holder has held it, or it has had work and no holder, 0
 * when it turned idle, -1 when its holder did not change, and that hint's version; for a renewed
 * lease (heartbeat): how long it had run when it was renewed, and its length (-1: none renewed).
 */
public record ScriptStats(int requeued, int dead, long queueWaitMs, long holdMs, long claimIndexAt,
        long claimIndexVersion, List<String> deadRequestIds, int pickupTimeouts, long busySince, long busyVersion,
        long renewedAfterMs, long renewedLeaseMs) {

    public static final ScriptStats NONE = new ScriptStats(0, 0, -1, -1, -1, -1, List.of(), 0, -1, -1, -1, -1);

    /**
     * A lease renewed after more than half of it had run: a holder that heartbeats this late loses
     * its lock to the first Redis stall or slow network round trip.
     */
    public boolean renewedLate() {
        return renewedLeaseMs > 0 && renewedAfterMs * 2 > renewedLeaseMs;
    }

    /** The statistics tail of a state-changing script's reply. */
    static ScriptStats of(Reply reply) {
        Reply tail = reply.size() < 2 ? null : reply.array(reply.size() - 1);
        if (tail == null || tail.size() < 8) {
            return NONE;
        }
        String indexVersion = tail.text(6);
        String dead = tail.text(5);
        String busyVersion = tail.text(9);
        return new ScriptStats((int) tail.number(0), (int) tail.number(1), tail.number(2), tail.number(3),
                tail.number(4), indexVersion == null ? -1 : Long.parseLong(indexVersion),
                dead == null ? List.of() : List.of(dead.split(",")),
                (int) tail.number(7), busyVersion == null ? -1 : tail.number(8),
                busyVersion == null ? -1 : Long.parseLong(busyVersion),
                tail.size() < 12 ? -1 : tail.number(10), tail.size() < 12 ? -1 : tail.number(11));
    }
}
