package dev.baton.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import dev.baton.ops.EmbeddedRedis;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/**
 * A real redis-server that a test may stop and start again on the same port, with AOF
 * persistence (fsync always) so that a restart keeps every acknowledged write.
 */
public class RestartableRedisResource implements QuarkusTestResourceLifecycleManager {

    private static int port;
    private static Path dataDir;
    private static EmbeddedRedis current;

    @Override
    public Map<String, String> start() {
        try {
            port = EmbeddedRedis.freePort();
            dataDir = Files.createTempDirectory("baton-aof");
            current = EmbeddedRedis.start(port, dataDir);
            return Map.of("quarkus.redis.hosts", current.url());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static synchronized void stopRedis() throws IOException {
        current.stop();
    }

    public static synchronized void startRedis() throws IOException {
        current = EmbeddedRedis.start(port, dataDir);
    }

    @Override
    public void stop() {
        try {
            current.stop();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
