package dev.baton.redis;

import java.util.List;

/**
 * The Redis keys of one lcid of one tenant. Every key carries the hash tag {@code {tenant|lcid}}
 * so that all of them live in one Cluster slot and a script may touch them together; the tenant
 * inside the tag keeps tenants apart even for equal lcids. Neither alphabet has braces or
 * {@code |}, so the tag is unambiguous. What each key and field holds: docs/internals/redis-layout.md
 * (layout {@value LayoutVersion#CURRENT}); the cross-lcid index keys are in {@link IndexKeys}.
 *
 * @param state the hash of the lock, the requests' records, the fence and the due times
 * @param queue the FIFO wait queue (a list of requestIds)
 * @param due   requestIds whose records are kept until a time, scored by it (a sorted set)
 */
public record LockKeys(String state, String queue, String due) {

    public static LockKeys of(String tenant, String lcid) {
        String base = base(tenant, lcid);
        return new LockKeys(base + "state", base + "queue", base + "due");
    }

    private static String base(String tenant, String lcid) {
        return "baton:{" + tenant + "|" + lcid + "}:";
    }

    /**
     * Written with a short TTL after each change when answers wait for replicas (not a script key):
     * so that WAIT also covers what an earlier, unacknowledged call wrote when its retry only
     * reads it back (see ScriptRunner).
     */
    public String ack() {
        return state.substring(0, state.length() - "state".length()) + "ack";
    }

    /** In the order the scripts read them as KEYS[1..3] (lua/includes/store.lua). */
    public List<String> asList() {
        return List.of(state, queue, due);
    }
}
