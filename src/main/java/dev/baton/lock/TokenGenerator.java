package dev.baton.lock;

import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;

import jakarta.enterprise.context.ApplicationScoped;

/** Lock tokens: 256 bits from a SecureRandom, URL-safe. A token is a capability: never log it. */
@ApplicationScoped
public class TokenGenerator {

    private static final int TOKEN_BYTES = 32;

    /**
     * One DRBG (NIST SP 800-90A, seeded by the platform's entropy source) per thread. The default
     * SecureRandom on Linux (NativePRNG) reads /dev/urandom under one global lock for every token:
     * a system call per token on the event loops, two per acquire -> complete cycle.
     */
    private static final ThreadLocal<SecureRandom> RANDOM = ThreadLocal.withInitial(() -> {
        try {
            return SecureRandom.getInstance("DRBG");
        } catch (NoSuchAlgorithmException absent) {
            return new SecureRandom();
        }
    });

    private final Base64.Encoder encoder = Base64.getUrlEncoder().withoutPadding();

    public String newToken() {
        byte[] bytes = new byte[TOKEN_BYTES];
        RANDOM.get().nextBytes(bytes);
        return encoder.encodeToString(bytes);
    }
}
