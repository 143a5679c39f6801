package dev.baton.redis;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The Lua scripts under {@code src/main/resources/lua}, one per lock state change or view, and a
 * few that run on a cross-lcid index key alone. Each is loaded with the helpers it includes
 * ({@link LuaSource}); the SHA sent with EVALSHA is that of the loaded text.
 */
public enum LuaScript {
    ACQUIRE("acquire", true, true),
    COMPLETE("complete", true, true),
    HEARTBEAT("heartbeat", true, true),
    ABORT("abort", true, true),
    CLAIM("claim", true, true),
    RETRY("retry", true, true),
    CLAIM_INSPECT("claim_inspect", false, false),
    VIEW_LOCK("view_lock", false, false),
    VIEW_REQUEST("view_request", false, false),
    /** Writes only a watch mark, a hint that needs no replica's acknowledgement. */
    WATCH_REQUEST("watch_request", false, false),
    VIEW_DEAD("view_dead", false, false),
    VIEW_QUEUE("view_queue", false, false),
    BUSY_INDEX_SET("busy_index_set", false, true),
    BUSY_INDEX_DROP("busy_index_drop", false, true),
    INDEX_DUE("index_due", false, false),
    INDEX_REMOVE_IF("index_remove_if", false, true),
    INDEX_ADD_NOW("index_add_now", false, true),
    INDEX_DROP_OLDER("index_drop_older", false, true),
    CLAIM_INDEX_SET("claim_index_set", false, true),
    CLAIM_INDEX_DROP("claim_index_drop", false, true);

    private final LuaSource source;
    private final String fileName;
    private final String sha1;
    private final boolean changesState;
    private final boolean writes;

    LuaScript(String name, boolean changesState, boolean writes) {
        this.changesState = changesState;
        this.writes = writes;
        this.source = LuaSource.load(name);
        this.fileName = name + ".lua";
        this.sha1 = sha1(source.text());
    }

    /** State-changing scripts end their reply with a statistics tail ({@link ScriptStats}). */
    public boolean changesState() {
        return changesState;
    }

    /**
     * Writes keys (lock state or an index): with baton.backend.replicas-acked its answer waits for
     * the replicas. Views and listings only read.
     */
    public boolean writes() {
        return writes;
    }

    /** The text Redis runs: the script with its includes resolved. */
    public String source() {
        return source.text();
    }

    /** The file and line of a line of {@link #source()}, as Redis numbers them (from 1). */
    public String where(int line) {
        return source.where(line);
    }

    public String sha1() {
        return sha1;
    }

    /** Its file's name, as traces name the span of a call: {@code acquire.lua}. */
    public String spanName() {
        return fileName;
    }

    private static String sha1(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
