package dev.baton.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/** Points Baton at a loopback port where nothing listens: Redis is down. */
public class NoRedisResource implements QuarkusTestResourceLifecycleManager {

    @Override
    public Map<String, String> start() {
        try {
            return Map.of("quarkus.redis.hosts", "redis://127.0.0.1:" + dev.baton.ops.EmbeddedRedis.freePort());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void stop() {
    }
}
