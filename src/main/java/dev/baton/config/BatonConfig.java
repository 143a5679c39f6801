package dev.baton.config;

import java.time.Duration;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;

/**
 * Every protocol limit, under the {@code baton.} prefix. Each key can be overridden by its
 * environment variable, e.g. {@code baton.lease.default-ms} by {@code BATON_LEASE_DEFAULT_MS}.
 */
@ConfigMapping(prefix = "baton")
public interface BatonConfig {

    Lease lease();

    Queue queue();

    Payload payload();

    /** A request is DEAD after this many attempts were handed out and none completed. */
    @WithDefault("5")
    int maxAttempts();

    /** How long DONE/ABORTED/DEAD records (and results) are kept for retries and late readers. */
    @WithDefault("1h")
    Duration resultRetention();

    /** How long an lcid's keys stay once it has no holder and nothing waiting. */
    @WithDefault("24h")
    Duration idleRetention();

    /** How long DEAD requests (with their payload) stay listed and retryable. */
    @WithDefault("7d")
    Duration deadRetention();

    Claims claims();

    /** baton.wait.* (Object.wait() takes the plain name). */
    @WithName("wait")
    Wait waiting();

    /** Wait-mode requests (protocol v1.1): turns and the re-checks of waiting callers. */
    interface Wait {
        /** A turn not picked up within this long ends ABORTED (PICKUP_TIMEOUT); at least 3 re-checks. */
        @WithDefault("5000")
        long pickupMs();

        /** How often a waiting caller's state is looked at again when no notification came. */
        @WithDefault("1000")
        long recheckMs();

        /** Long-polls one replica holds at most; beyond them, calls are answered at once. */
        @WithDefault("10000")
        int maxWaiters();
    }

    Auth auth();

    interface Auth {
        /** API keys on the API port; off in dev and test, on in prod. */
        @WithDefault("true")
        boolean enabled();

        /**
         * The accepted keys, as {@code tenant:sha256-hex-of-key} or {@code tenant:sha256-hex:admin};
         * several per tenant while keys rotate. Never the keys themselves.
         */
        java.util.Optional<java.util.List<String>> apiKeys();

        /** Turn API keys off when every caller has a workload token. */
        @WithDefault("true")
        boolean apiKeysEnabled();

        Jwt jwt();
    }

    /**
     * Workload identity: signed JWTs (Kubernetes service-account tokens, OIDC) verified against a
     * JWKS. The verification settings are handed to smallrye-jwt in application.properties.
     */
    interface Jwt {
        @WithDefault("false")
        boolean enabled();

        /** Where the signing keys are: an http(s) URL of a JWKS, or a file (JWKS or PEM). */
        java.util.Optional<String> jwks();

        /** The exact {@code iss} a token must carry. */
        java.util.Optional<String> issuer();

        /** A token's {@code aud} must contain one of these. */
        @WithDefault("baton")
        java.util.List<String> audience();

        /** Slack for {@code exp} and {@code nbf} between the issuer's clock and ours: 1 to 300. */
        @WithDefault("30")
        int clockSkewSeconds();

        /** Accepted signature algorithms; only asymmetric ones (never HS*, never none). */
        @WithDefault("RS256")
        java.util.List<String> algorithms();

        /** PEM file of the CA that signs the JWKS server's certificate (in Kubernetes, the cluster CA). */
        java.util.Optional<String> caCertificate();

        /** Minutes a fetched JWKS is used before it is fetched again. */
        @WithDefault("60")
        int jwksCacheMinutes();

        /**
         * A token whose key id is not in the JWKS fetches it again at once, then at most once per
         * this many minutes (so unknown key ids cannot make the service hammer the issuer).
         */
        @WithDefault("5")
        int jwksForcedRefreshMinutes();

        /** {@code selector=tenant:role}, first match wins; a valid token matching none is refused (403). */
        java.util.Optional<java.util.List<String>> rules();
    }

    interface Claims {
        /** How often each instance re-checks due entries of the claim index (and prunes it). */
        @WithDefault("15s")
        Duration sweepEvery();

        /** Index entries a claim looks at before answering 204. */
        @WithDefault("16")
        int candidates();

        /**
         * Due index entries a claim with an lcid prefix looks through at most for matching ones:
         * the index is ordered by time, not name, and the bound keeps one claim's cost fixed.
         */
        @WithDefault("1000")
        int prefixScan();

        /** Claim-index hints wait this long to be written together: one write per tenant, not one per grant. */
        @WithDefault("10ms")
        Duration hintBatch();
    }

    Backend backend();

    interface Lease {
        @WithDefault("30000")
        long defaultMs();

        @WithDefault("500")
        long minMs();

        @WithDefault("600000")
        long maxMs();
    }

    interface Queue {
        @WithDefault("1000")
        int maxLength();

        /** Retry-After sent with 429 QUEUE_FULL. */
        @WithDefault("1")
        int retryAfterSeconds();
    }

    interface Payload {
        /** Largest serialized payload (and result), in bytes of UTF-8 JSON. */
        @WithDefault("65536")
        int maxBytes();
    }

    interface Backend {
        /** A Redis call slower than this answers 503 BACKEND_UNAVAILABLE. */
        @WithDefault("1500ms")
        Duration timeout();

        /** Retry-After sent with 503 BACKEND_UNAVAILABLE. */
        @WithDefault("1")
        int retryAfterSeconds();

        /**
         * Redis connections that all requests share, calls pipelined on each (at most
         * quarkus.redis.max-waiting-handlers in flight per connection).
         */
        @WithDefault("2")
        int connections();

        /**
         * Durable acknowledgements: an answer that acknowledges a state change is sent only once
         * this many replicas confirmed the write (WAIT after the script); 0 = as soon as the
         * primary has it (asynchronous replication, a failover may lose the last writes).
         */
        @WithDefault("0")
        int replicasAcked();

        /** How long WAIT waits for the replicas; short of them the caller gets 503 BACKEND_UNAVAILABLE. */
        @WithDefault("500ms")
        Duration replicasTimeout();
    }
}
