package dev.baton.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The lock state changes, one Lua file each under {@code src/main/resources/lua}. Each is loaded
 * with the shared prelude {@code lib.lua} in front, so the SHA sent with EVALSHA is that of the
 * combined text.
 */
public enum LuaScript {
    ACQUIRE("acquire", true, true),
    COMPLETE("complete", true, true),
    HEARTBEAT("heartbeat", true, true),
    ABORT("abort", true, true),
    CLAIM("claim", true, true),
    RETRY("retry", true, true),
    VIEW_LOCK("view_lock", false, true),
    VIEW_REQUEST("view_request", false, true),
    VIEW_DEAD("view_dead", false, true),
    /** Index scripts run on one cross-lcid index key, without the lcid prelude. */
    INDEX_DUE("index_due", false, false),
    INDEX_REMOVE_IF("index_remove_if", false, false),
    CLAIM_INDEX_SET("claim_index_set", false, false),
    CLAIM_INDEX_DROP("claim_index_drop", false, false);

    private final String source;
    private final String sha1;
    private final boolean changesState;

    LuaScript(String name, boolean changesState, boolean onLcidKeys) {
        this.changesState = changesState;
        this.source = onLcidKeys ? read("lib") + "\n" + read(name) : read(name);
        this.sha1 = sha1(source);
    }

    /** State-changing scripts end their reply with a statistics tail (lua/lib.lua with_stats), except CLAIM in inspect mode. */
    public boolean changesState() {
        return changesState;
    }

    public String source() {
        return source;
    }

    public String sha1() {
        return sha1;
    }

    private static String read(String name) {
        String path = "/lua/" + name + ".lua";
        try (InputStream in = LuaScript.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("missing script resource " + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String sha1(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
