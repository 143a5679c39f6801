package dev.baton.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/** A "Redis" that accepts connections and never answers: a hung or overloaded server. */
public class SilentRedisResource implements QuarkusTestResourceLifecycleManager {

    private ServerSocket server;
    private final List<Socket> held = new CopyOnWriteArrayList<>();

    @Override
    public Map<String, String> start() {
        try {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread acceptor = new Thread(() -> {
            while (!server.isClosed()) {
                try {
                    held.add(server.accept());
                } catch (IOException closed) {
                    return;
                }
            }
        }, "silent-redis");
        acceptor.setDaemon(true);
        acceptor.start();
        return Map.of("quarkus.redis.hosts", "redis://127.0.0.1:" + server.getLocalPort());
    }

    @Override
    public void stop() {
        try {
            server.close();
            for (Socket socket : held) {
                socket.close();
            }
        } catch (IOException ignored) {
            // test teardown
        }
    }
}
