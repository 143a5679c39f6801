package dev.baton.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

import dev.baton.ops.EmbeddedRedis;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import redis.clients.jedis.Jedis;

/**
 * A redis-server of its own (whatever the suite's Redis is) that already holds Baton data in
 * layout {@value #FOREIGN_LAYOUT}, a layout this release does not know, before the service
 * starts: as a newer release would have left it.
 */
public class ForeignLayoutRedisResource implements QuarkusTestResourceLifecycleManager {

    public static final String FOREIGN_LAYOUT = "3";
    /** A key of that layout's lcid, which the service must leave alone. */
    public static final String FOREIGN_KEY = "baton:{default|order-1}:v3";

    private static EmbeddedRedis redis;

    public static Jedis jedis() {
        return new Jedis("127.0.0.1", redis.port());
    }

    @Override
    public Map<String, String> start() {
        try {
            redis = EmbeddedRedis.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try (Jedis jedis = jedis()) {
            jedis.set("baton:default:layout", FOREIGN_LAYOUT);
            jedis.hset(FOREIGN_KEY, "lock", "a future grant");
        }
        return Map.of("quarkus.redis.hosts", redis.url());
    }

    @Override
    public void stop() {
        try {
            redis.stop();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
