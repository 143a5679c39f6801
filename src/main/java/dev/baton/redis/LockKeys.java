package dev.baton.redis;

import java.util.List;

/**
 * The Redis keys of one lcid. Every key carries the hash tag {@code {lcid}} so that all of them
 * live in one Cluster slot and a script may touch them together. The lcid alphabet has no braces,
 * so the tag is always exactly the lcid.
 */
public record LockKeys(String lock, String queue, String requests, String fence, String purge) {

    private static final String PREFIX = "baton:{";

    public static LockKeys of(String lcid) {
        String base = PREFIX + lcid + "}:";
        return new LockKeys(base + "lock", base + "queue", base + "requests", base + "fence", base + "purge");
    }

    /** In the order the scripts read them as KEYS[1..5] (see lua/lib.lua). */
    public List<String> asList() {
        return List.of(lock, queue, requests, fence, purge);
    }
}
