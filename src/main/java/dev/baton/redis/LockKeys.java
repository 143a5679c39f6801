package dev.baton.redis;

import java.util.List;

/**
 * The Redis keys of one lcid of one tenant. Every key carries the hash tag {@code {tenant|lcid}}
 * so that all of them live in one Cluster slot and a script may touch them together; the tenant
 * inside the tag keeps tenants apart even for equal lcids. Neither alphabet has braces or
 * {@code |}, so the tag is unambiguous. What each key and field holds: docs/internals/redis-layout.md;
 * the cross-lcid index keys are in {@link IndexKeys}.
 */
public record LockKeys(String lock, String queue, String requests, String fence, String purge) {

    public static LockKeys of(String tenant, String lcid) {
        String base = "baton:{" + tenant + "|" + lcid + "}:";
        return new LockKeys(base + "lock", base + "queue", base + "requests", base + "fence", base + "purge");
    }

    /**
     * Written with a short TTL after each change when answers wait for replicas (not a script key):
     * so that WAIT also covers what an earlier, unacknowledged call wrote when its retry only
     * reads it back (see ScriptRunner).
     */
    public String ack() {
        return lock.substring(0, lock.length() - "lock".length()) + "ack";
    }

    /** In the order the scripts read them as KEYS[1..5] (lua/includes/keys.lua). */
    public List<String> asList() {
        return List.of(lock, queue, requests, fence, purge);
    }
}
