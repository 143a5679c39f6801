package dev.baton.ops;

import java.util.List;
import java.util.Optional;

import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.interceptor.Interceptor;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import dev.baton.config.BatonConfig;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.StartupEvent;

/** Refuses to start with a configuration that cannot work, and says where Redis is. */
@Singleton
public class StartupChecks {

    private static final Logger LOG = Logger.getLogger(StartupChecks.class);

    private final BatonConfig config;
    private final Optional<String> redisHosts;
    private final Optional<String> embeddedRedis;

    public StartupChecks(BatonConfig config,
            @ConfigProperty(name = "quarkus.redis.hosts") Optional<String> redisHosts,
            @ConfigProperty(name = DevRedisConfigSourceFactory.ANNOUNCE_PROPERTY) Optional<String> embeddedRedis) {
        this.config = config;
        this.redisHosts = redisHosts;
        this.embeddedRedis = embeddedRedis;
    }

    /** Runs before the Redis client's own startup observer, so the operator reads this message first. */
    void onStart(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE) StartupEvent event) {
        if (redisHosts.isEmpty()) {
            throw new IllegalStateException("Baton needs Redis or Valkey: set QUARKUS_REDIS_HOSTS "
                    + "(for example redis://redis:6379, or rediss://user:password@host:6380 with TLS). "
                    + "Only dev mode (./mvnw quarkus:dev) starts an embedded redis-server by itself.");
        }
        checkAuth(config.auth());
        checkWait(config.waiting());
        checkReplicas(config.backend());
        BatonConfig.Lease lease = config.lease();
        if (lease.minMs() <= 0 || lease.minMs() > lease.defaultMs() || lease.defaultMs() > lease.maxMs()) {
            throw new IllegalStateException("baton.lease must satisfy 0 < min-ms <= default-ms <= max-ms, got "
                    + lease.minMs() + " / " + lease.defaultMs() + " / " + lease.maxMs());
        }
        if (config.queue().maxLength() < 1 || config.maxAttempts() < 1 || config.payload().maxBytes() < 1) {
            throw new IllegalStateException("baton.queue.max-length, baton.max-attempts and "
                    + "baton.payload.max-bytes must be at least 1");
        }
        if (!config.auth().enabled() && LaunchMode.current() == LaunchMode.NORMAL) {
            LOG.warn("Authentication is OFF (baton.auth.enabled=false): anyone who reaches the API port can use it");
        }
        if (embeddedRedis.isPresent()) {
            LOG.infof("Dev mode: no quarkus.redis.hosts configured, started an embedded redis-server at %s",
                    embeddedRedis.get());
        } else if (LaunchMode.current() != LaunchMode.TEST) {
            LOG.infof("Using Redis at %s", redacted(redisHosts.get()));
        }
    }

    /** Callers must have a way in: API keys, workload tokens, or authentication explicitly off. */
    static void checkAuth(BatonConfig.Auth auth) {
        if (!auth.enabled()) {
            return;
        }
        BatonConfig.Jwt jwt = auth.jwt();
        boolean keys = auth.apiKeysEnabled() && auth.apiKeys().map(list -> !list.isEmpty()).orElse(false);
        if (!keys && !jwt.enabled()) {
            throw new IllegalStateException("Baton's API needs API keys or workload tokens: set BATON_AUTH_API_KEYS to "
                    + "tenant:<sha256 of the key>[:admin] entries, comma-separated, or BATON_AUTH_JWT_ENABLED=true "
                    + "with an issuer, a JWKS and rules (see docs/security.md), "
                    + "or BATON_AUTH_ENABLED=false to run without authentication.");
        }
        if (!jwt.enabled()) {
            return;
        }
        if (jwt.jwks().isEmpty() || jwt.issuer().isEmpty()) {
            throw new IllegalStateException("baton.auth.jwt.enabled=true needs baton.auth.jwt.jwks (a JWKS URL or "
                    + "file) and baton.auth.jwt.issuer (the iss tokens carry): without them no token can be verified");
        }
        if (jwt.rules().map(List::isEmpty).orElse(true)) {
            throw new IllegalStateException("baton.auth.jwt.rules is empty: every token would be refused (403). "
                    + "Map tokens to tenants, for example orders/payment-svc=orders:worker");
        }
        if (jwt.audience().isEmpty() || jwt.audience().stream().anyMatch(String::isBlank)) {
            throw new IllegalStateException("baton.auth.jwt.audience must name at least one audience");
        }
        for (String algorithm : jwt.algorithms()) {
            if (!ASYMMETRIC.contains(algorithm.trim())) {
                throw new IllegalStateException("baton.auth.jwt.algorithms: " + algorithm + " is not accepted; "
                        + "only asymmetric signatures are: " + String.join(", ", ASYMMETRIC));
            }
        }
        // At least 1: smallrye-jwt reads 0 as "not set" and then allows its own default of 60 seconds.
        if (jwt.clockSkewSeconds() < 1 || jwt.clockSkewSeconds() > 300) {
            throw new IllegalStateException("baton.auth.jwt.clock-skew-seconds must be between 1 and 300, got "
                    + jwt.clockSkewSeconds());
        }
        if (jwt.jwksCacheMinutes() < 1 || jwt.jwksForcedRefreshMinutes() < 1) {
            throw new IllegalStateException("baton.auth.jwt.jwks-cache-minutes and jwks-forced-refresh-minutes "
                    + "must be at least 1");
        }
    }

    /** Public-key signatures only: an HMAC key would have to be shared, and "none" is no signature. */
    private static final List<String> ASYMMETRIC = List.of("RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
            "ES256", "ES384", "ES512", "EdDSA");

    /** Never log a Redis password. */
    static String redacted(String hosts) {
        return hosts.replaceAll("//[^@/]*@", "//***@");
    }

    /** WAIT runs inside the backend timeout: a longer replica wait would be cut off as "Redis is down". */
    static void checkReplicas(BatonConfig.Backend backend) {
        if (backend.replicasAcked() < 0) {
            throw new IllegalStateException("baton.backend.replicas-acked must be at least 0, got " + backend.replicasAcked());
        }
        if (backend.replicasAcked() > 0 && (backend.replicasTimeout().toMillis() < 1
                || backend.replicasTimeout().compareTo(backend.timeout()) >= 0)) {
            throw new IllegalStateException("baton.backend.replicas-timeout must be at least 1 ms and shorter than "
                    + "baton.backend.timeout, got " + backend.replicasTimeout().toMillis() + " ms and "
                    + backend.timeout().toMillis() + " ms");
        }
    }

    /** A turn must outlive a few re-checks of its waiter, or a waiter could miss its own turn. */
    static void checkWait(BatonConfig.Wait wait) {
        if (wait.recheckMs() <= 0 || wait.pickupMs() < 3 * wait.recheckMs()) {
            throw new IllegalStateException("baton.wait.pickup-ms must be at least 3 times baton.wait.recheck-ms (> 0),"
                    + " got " + wait.pickupMs() + " and " + wait.recheckMs());
        }
        if (wait.maxWaiters() < 0) {
            throw new IllegalStateException("baton.wait.max-waiters must be at least 0, got " + wait.maxWaiters());
        }
    }
}
