package dev.baton.ops;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import java.util.Map;

import org.eclipse.microprofile.config.spi.ConfigSource;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.PropertiesConfigSource;

/**
 * Dev mode without a configured Redis: start the redis-server bundled in embedded-redis on a free
 * loopback port and point {@code quarkus.redis.hosts} at it, so {@code ./mvnw quarkus:dev} works
 * on a machine with no Redis and no Docker. Any configured {@code quarkus.redis.hosts} wins.
 * <p>
 * Live reload re-runs this factory in a fresh class loader, so the server's port is kept in a
 * system property and the running server is reused instead of starting another.
 */
public class DevRedisConfigSourceFactory implements ConfigSourceFactory {

    static final String PORT_PROPERTY = "dev.baton.embedded-redis.port";
    static final String ANNOUNCE_PROPERTY = "dev.baton.embedded-redis";

    @Override
    public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
        if (!context.getProfiles().contains("dev") || context.getValue("quarkus.redis.hosts").getValue() != null) {
            return List.of();
        }
        int port = ensureRunning();
        String url = "redis://127.0.0.1:" + port;
        return List.of(new PropertiesConfigSource(
                Map.of("quarkus.redis.hosts", url, ANNOUNCE_PROPERTY, url), "dev.baton.embedded-redis", 50));
    }

    private static synchronized int ensureRunning() {
        String known = System.getProperty(PORT_PROPERTY);
        if (known != null && listening(Integer.parseInt(known))) {
            return Integer.parseInt(known);
        }
        try {
            EmbeddedRedis redis = EmbeddedRedis.start();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    redis.stop();
                } catch (IOException ignored) {
                    // the JVM is going away; the child process dies with it
                }
            }, "baton-dev-redis-stop"));
            System.setProperty(PORT_PROPERTY, Integer.toString(redis.port()));
            return redis.port();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the embedded redis-server for dev mode", e);
        }
    }

    private static boolean listening(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
