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
    ACQUIRE("acquire", true),
    COMPLETE("complete", true),
    HEARTBEAT("heartbeat", true),
    ABORT("abort", true),
    CLAIM("claim", true),
    RETRY("retry", true),
    CLAIM_INSPECT("claim_inspect", false),
    VIEW_LOCK("view_lock", false),
    VIEW_REQUEST("view_request", false),
    VIEW_DEAD("view_dead", false),
    INDEX_DUE("index_due", false),
    INDEX_REMOVE_IF("index_remove_if", false),
    INDEX_ADD_NOW("index_add_now", false),
    INDEX_DROP_OLDER("index_drop_older", false),
    CLAIM_INDEX_SET("claim_index_set", false),
    CLAIM_INDEX_DROP("claim_index_drop", false);

    private final LuaSource source;
    private final String sha1;
    private final boolean changesState;

    LuaScript(String name, boolean changesState) {
        this.changesState = changesState;
        this.source = LuaSource.load(name);
        this.sha1 = sha1(source.text());
    }

    /** State-changing scripts end their reply with a statistics tail ({@link ScriptStats}). */
    public boolean changesState() {
        return changesState;
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

    private static String sha1(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
