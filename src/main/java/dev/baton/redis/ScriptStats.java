package dev.baton.lock;

/**
 * What a state-changing script did besides its answer: requests it put back in the queue or
 * declared DEAD (a holder's lease ran out, or an abort with requeue), how long the request it
 * activated had waited, how long the request it completed was held (-1 when not applicable),
 * when the lcid should be looked at by claims (-1: no hint) and that hint's version (newer
 * versions win in the index, whatever order hints arrive in), and the request it declared DEAD.
 */
public record ScriptStats(int requeued, int dead, long queueWaitMs, long holdMs, long claimIndexAt,
        long claimIndexVersion, String deadRequestId) {

    public static final ScriptStats NONE = new ScriptStats(0, 0, -1, -1, -1, -1, null);
}
