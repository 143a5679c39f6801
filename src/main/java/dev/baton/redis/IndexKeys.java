package dev.baton.redis;

/**
 * The cross-lcid index keys of one tenant (docs/internals/redis-layout.md lists every key). Each index is
 * one sorted set in its own slot; the lcid keys are in {@link LockKeys}.
 */
public final class IndexKeys {

    private IndexKeys() {
    }

    /** lcids that may need rescue, scored by when (ms, Redis clock) a claim should look at them. */
    public static String claimable(String tenant) {
        return "baton:" + tenant + ":claimable";
    }

    /**
     * The claim index's entry versions. Its hash tag is the whole name of the index key (which has
     * no braces: tenants cannot contain them), so both keys share one Cluster slot and a script may
     * update them together.
     */
    public static String claimableVersions(String tenant) {
        return "{" + claimable(tenant) + "}:versions";
    }

    /**
     * Busy lcids (a holder, or queued work), scored by since when (ms, Redis clock) their holder
     * has held the lock, or they have had work and no holder: for operators (GET /v1/busy-locks).
     */
    public static String busy(String tenant) {
        return "baton:" + tenant + ":busy";
    }

    /** The busy index's entry versions; same slot as {@link #busy}, as for the claim index. */
    public static String busyVersions(String tenant) {
        return "{" + busy(tenant) + "}:versions";
    }

    /**
     * The Redis layout version the tenant's keys are in ({@link LayoutVersion}): written once, by
     * the first replica that starts on a Redis without Baton data for the tenant.
     */
    public static String layout(String tenant) {
        return "baton:" + tenant + ":layout";
    }

    /** DEAD requests as {@link #deadMember} entries, scored by when they died (ms, Redis clock). */
    public static String dead(String tenant) {
        return "baton:" + tenant + ":dead";
    }

    /** lcids and requestIds never contain a space. */
    static String deadMember(String lcid, String requestId) {
        return lcid + " " + requestId;
    }
}
