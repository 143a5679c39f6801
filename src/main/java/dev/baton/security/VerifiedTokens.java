package dev.baton.security;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

import io.quarkus.security.identity.SecurityIdentity;

/**
 * The identities of JWTs verified in the last minute. A workload sends the same token for many
 * calls; checking its RSA signature and parsing its claims each time costs more service CPU than
 * the lock call itself. An entry lives until the token's {@code exp} or for {@link #TTL_MS},
 * whichever is first, so a key withdrawn from the JWKS stops opening Baton within a minute.
 * Keyed by the token's SHA-256: the heap never holds the bearer tokens themselves.
 */
final class VerifiedTokens {

    static final long TTL_MS = 60_000;
    static final int MAX_ENTRIES = 10_000;

    private record Entry(SecurityIdentity identity, long untilMs) {
    }

    private final Map<String, Entry> byDigest = new ConcurrentHashMap<>();
    private final LongSupplier clockMs;

    VerifiedTokens(LongSupplier clockMs) {
        this.clockMs = clockMs;
    }

    /** The identity a token was verified to, while its entry lives; else null. */
    SecurityIdentity get(String digest) {
        Entry entry = byDigest.get(digest);
        if (entry == null) {
            return null;
        }
        if (clockMs.getAsLong() >= entry.untilMs()) {
            byDigest.remove(digest, entry);
            return null;
        }
        return entry.identity();
    }

    /** {@code expiresAtMs}: the token's {@code exp}; a token already past it is not kept. */
    void put(String digest, SecurityIdentity identity, long expiresAtMs) {
        long now = clockMs.getAsLong();
        long until = Math.min(now + TTL_MS, expiresAtMs);
        if (until <= now) {
            return;
        }
        if (byDigest.size() >= MAX_ENTRIES) {
            byDigest.values().removeIf(entry -> now >= entry.untilMs());
            if (byDigest.size() >= MAX_ENTRIES) {
                byDigest.clear(); // more live tokens than any real fleet: start over rather than grow
            }
        }
        byDigest.put(digest, new Entry(identity, until));
    }

    int size() {
        return byDigest.size();
    }
}
