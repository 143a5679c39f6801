package dev.baton.client;

import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client is built of parts whose references go one way only (clients/README.md, "How each client is built"):
 * http &lt;- retries &lt;- calls &lt;- holder / wait / claims &lt;- the facade. Read from the compiled classes' constant
 * pools, where every class a class names is listed (a Javadoc link is not, an inlined constant is not).
 */
class PartsTest {
    /** Each part, from the bottom up, and the classes it is made of. */
    private static final Map<String, Set<String>> PARTS = new LinkedHashMap<>();
    /** What each part may name besides the shared types: the parts to its left, minus the siblings. */
    private static final Map<String, Set<String>> MAY_USE = Map.of(
            "http", Set.of(),
            "retries", Set.of("http"),
            "calls", Set.of("http", "retries"),
            "holder", Set.of("http", "retries", "calls"),
            "wait", Set.of("http", "retries", "calls", "holder"),
            "claims", Set.of("http", "retries", "calls", "holder"),
            "facade", Set.of("http", "retries", "calls", "holder", "wait", "claims"));

    static {
        PARTS.put("http", Set.of("Http"));
        PARTS.put("retries", Set.of("Retries"));
        PARTS.put("calls", Set.of("Calls"));
        PARTS.put("holder", Set.of("Holder", "Holding", "Held", "Work", "Handler", "HandlerInterrupt"));
        PARTS.put("wait", Set.of("Waits", "Turn", "LockSet", "LockAllHandler"));
        PARTS.put("claims", Set.of("Claims"));
        PARTS.put("facade", Set.of("BatonClient"));
    }

    private static final Pattern REF = Pattern.compile("dev/baton/client/([A-Za-z0-9_]+)");

    private static String partOf(String topLevelClass) {
        for (Map.Entry<String, Set<String>> p : PARTS.entrySet()) {
            if (p.getValue().contains(topLevelClass)) {
                return p.getKey();
            }
        }
        return null; // a shared type: outcomes, options, errors, tracing
    }

    @Test
    void the_parts_refer_only_to_the_parts_before_them() throws Exception {
        Path classes = Path.of(BatonClient.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Map<String, Set<String>> uses = new TreeMap<>(); // top-level class -> parts it names
        Set<String> seen = new TreeSet<>();
        try (Stream<Path> files = Files.walk(classes)) {
            for (Path f : files.filter(x -> x.toString().endsWith(".class")).toList()) {
                String name = f.getFileName().toString().replace(".class", "");
                String top = name.contains("$") ? name.substring(0, name.indexOf('$')) : name;
                seen.add(top);
                for (String s : utf8Constants(f)) {
                    Matcher m = REF.matcher(s);
                    while (m.find()) {
                        String other = m.group(1);
                        String part = partOf(other);
                        if (part != null && !other.equals(top) && !part.equals(partOf(top))) {
                            uses.computeIfAbsent(top, k -> new TreeSet<>()).add(part);
                        }
                    }
                }
            }
        }
        for (Set<String> part : PARTS.values()) {
            assertTrue(seen.containsAll(part), "compiled: " + part);
        }
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, Set<String>> u : uses.entrySet()) {
            String part = partOf(u.getKey());
            Set<String> allowed = part == null ? Set.of() : MAY_USE.get(part);
            for (String used : u.getValue()) {
                if (!allowed.contains(used)) {
                    wrong.add(u.getKey() + " (" + (part == null ? "shared type" : part) + ") names the " + used + " part");
                }
            }
        }
        assertEquals(List.of(), wrong);
        assertTrue(uses.get("Waits").contains("holder") && uses.get("Holder").contains("calls")
                && uses.get("Calls").contains("retries") && uses.get("Retries").contains("http"), "the scan sees references: " + uses);
    }

    /** The CONSTANT_Utf8 entries of a class file's constant pool (JVMS 4.4). */
    private static List<String> utf8Constants(Path classFile) throws IOException {
        List<String> out = new ArrayList<>();
        try (InputStream in = Files.newInputStream(classFile); DataInputStream d = new DataInputStream(in)) {
            d.readInt(); // magic
            d.readUnsignedShort();
            d.readUnsignedShort();
            int count = d.readUnsignedShort();
            for (int i = 1; i < count; i++) {
                int tag = d.readUnsignedByte();
                switch (tag) {
                    case 1 -> out.add(d.readUTF());
                    case 3, 4, 9, 10, 11, 12, 17, 18 -> d.skipBytes(4);
                    case 5, 6 -> {
                        d.skipBytes(8);
                        i++; // takes two entries
                    }
                    case 7, 8, 16, 19, 20 -> d.skipBytes(2);
                    case 15 -> d.skipBytes(3);
                    default -> throw new IOException("constant pool tag " + tag + " in " + classFile);
                }
            }
        }
        return out;
    }
}
