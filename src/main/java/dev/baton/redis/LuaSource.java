package dev.baton.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Loads a script from {@code src/main/resources/lua} and resolves its include lines,
 * {@code --- @include "includes/name"} (as BullMQ's loader does): each included file comes in
 * once, before the line that first asked for it, with its own includes first; a cycle is refused.
 * It remembers where every line came from, so that a Redis error line names the helper file.
 */
public final class LuaSource {

    private static final Pattern INCLUDE = Pattern.compile("^--- @include \"([a-z_/]+)\"\\s*$");

    private final String text;
    private final List<String> origins;

    private LuaSource(String text, List<String> origins) {
        this.text = text;
        this.origins = origins;
    }

    public static LuaSource load(String name) {
        StringBuilder text = new StringBuilder();
        List<String> origins = new ArrayList<>();
        append(name, text, origins, new HashSet<>(), new ArrayDeque<>());
        return new LuaSource(text.toString(), List.copyOf(origins));
    }

    public String text() {
        return text;
    }

    /** {@code file.lua:line} of line {@code line} (from 1) of the loaded text, or "line N" when out of range. */
    public String where(int line) {
        return line >= 1 && line <= origins.size() ? origins.get(line - 1) : "line " + line;
    }

    private static void append(String name, StringBuilder text, List<String> origins, Set<String> loaded,
            Deque<String> including) {
        if (including.contains(name)) {
            throw new IllegalStateException("lua include cycle: " + String.join(" -> ", including) + " -> " + name);
        }
        if (!loaded.add(name)) {
            return;
        }
        including.addLast(name);
        String[] lines = read(name).split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            Matcher include = INCLUDE.matcher(lines[i]);
            if (include.matches()) {
                append(include.group(1), text, origins, loaded, including);
            } else if (i < lines.length - 1 || !lines[i].isEmpty()) {
                text.append(lines[i]).append('\n');
                origins.add(name + ".lua:" + (i + 1));
            }
        }
        including.removeLast();
    }

    private static String read(String name) {
        String path = "/lua/" + name + ".lua";
        try (InputStream in = LuaSource.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("missing script resource " + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
