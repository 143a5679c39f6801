package dev.baton.ops;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;

import redis.embedded.RedisServer;
import redis.embedded.core.RedisServerBuilder;

/**
 * The redis-server binary bundled in embedded-redis, on a free loopback port, without
 * persistence: for dev mode and tests on machines with no Redis and no Docker.
 */
public final class EmbeddedRedis {

    private final RedisServer server;
    private final int port;

    private EmbeddedRedis(RedisServer server, int port) {
        this.server = server;
        this.port = port;
    }

    public static EmbeddedRedis start() throws IOException {
        return start(freePort(), null);
    }

    /**
     * On a given port; with {@code aofDir}, persistent: AOF with fsync on every write, so a
     * restart on the same port and folder finds every acknowledged change.
     */
    public static EmbeddedRedis start(int port, Path aofDir) throws IOException {
        RedisServerBuilder builder = RedisServer.newRedisServer()
                .port(port)
                .setting("bind 127.0.0.1")
                .setting("save \"\"");
        if (aofDir == null) {
            builder.setting("appendonly no");
        } else {
            builder.setting("appendonly yes").setting("appendfsync always").setting("dir " + aofDir.toAbsolutePath());
        }
        RedisServer server = builder.build();
        server.start();
        return new EmbeddedRedis(server, port);
    }

    public int port() {
        return port;
    }

    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    public void stop() throws IOException {
        server.stop();
    }

    public static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        }
    }
}
