package dev.baton.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.inject.Singleton;

import dev.baton.config.BatonConfig;

/**
 * The configured API keys, known only by their SHA-256: a leaked configuration or log never
 * reveals a usable key. Keys are long random strings, so a plain digest is enough (no slow hash
 * is needed against guessing).
 */
@Singleton
public class ApiKeys {

    private static final Pattern ENTRY = Pattern.compile("([A-Za-z0-9_-]{1,64}):([0-9a-f]{64})(:admin)?");

    private final Map<String, Caller> byDigest = new HashMap<>();

    public ApiKeys(BatonConfig config) {
        for (String entry : config.auth().apiKeys().orElse(List.of())) {
            Matcher match = ENTRY.matcher(entry.trim());
            if (!match.matches()) {
                // The entry itself is not repeated: it might be a key pasted by mistake.
                throw new IllegalStateException("baton.auth.api-keys: an entry is not tenant:<64 hex sha256>[:admin]"
                        + " (tenant: 1 to 64 of A-Z a-z 0-9 _ -)");
            }
            byDigest.put(match.group(2), new Caller(match.group(1), match.group(3) != null));
        }
    }

    public Optional<Caller> find(String key) {
        return Optional.ofNullable(byDigest.get(sha256(key)));
    }

    /** Every tenant that has a key. */
    public Set<String> tenants() {
        Set<String> tenants = new TreeSet<>();
        byDigest.values().forEach(caller -> tenants.add(caller.tenant()));
        return tenants;
    }

    /** The digest an API key is configured by (docs/security.md). */
    public static String sha256(String key) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(key.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
