package dev.baton.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

import dev.baton.ops.EmbeddedRedis;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/**
 * A real redis-server for the tests: the binary bundled in embedded-redis, started on a free
 * port. Set {@code BATON_TEST_REDIS_URL} (e.g. redis://127.0.0.1:6390) to run the same tests
 * against an external Redis or Valkey instead.
 */
public class RedisTestResource implements QuarkusTestResourceLifecycleManager {

    public static final String EXTERNAL_URL_ENV = "BATON_TEST_REDIS_URL";

    private EmbeddedRedis embedded;

    /** The Redis the tests use: the external one when configured, else a fresh embedded one. */
    public static String externalUrl() {
        String external = System.getenv(EXTERNAL_URL_ENV);
        return external == null || external.isBlank() ? null : external;
    }

    @Override
    public Map<String, String> start() {
        if (externalUrl() != null) {
            return Map.of("quarkus.redis.hosts", externalUrl());
        }
        try {
            embedded = EmbeddedRedis.start();
            return Map.of("quarkus.redis.hosts", embedded.url());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void stop() {
        if (embedded != null) {
            try {
                embedded.stop();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
