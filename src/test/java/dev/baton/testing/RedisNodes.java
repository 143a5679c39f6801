package dev.baton.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

import dev.baton.ops.EmbeddedRedis;
import redis.clients.jedis.Jedis;
import redis.embedded.core.ExecutableProvider;

/**
 * Real redis-server processes on loopback that a test can kill with SIGKILL and start again:
 * primaries, replicas, sentinels, cluster nodes. The binary is {@code BATON_TEST_REDIS_SERVER}
 * when set (CI sets Debian's redis-server 7; {@code BATON_TEST_REDIS_SENTINEL} may name a
 * redis-sentinel binary), otherwise the redis-server 6.2 bundled in embedded-redis.
 */
public final class RedisNodes implements AutoCloseable {

    public static final String SERVER_ENV = "BATON_TEST_REDIS_SERVER";
    public static final String SENTINEL_ENV = "BATON_TEST_REDIS_SENTINEL";

    private final Path dir;
    private final List<Node> nodes = new ArrayList<>();

    public RedisNodes() {
        try {
            dir = Files.createTempDirectory("baton-nodes");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A redis-server on a free port, no persistence, with these extra settings ("--name", "value", ...). */
    public Node server(String... settings) {
        return serverOn(freePort(), settings);
    }

    /** A replica of the given node. */
    public Node replicaOf(Node primary) {
        return server("--replicaof", "127.0.0.1", Integer.toString(primary.port()));
    }

    /** A sentinel watching {@code primary} as {@code masterName}, quorum 2, down after 1 s. */
    public Node sentinel(String masterName, Node primary) {
        int port = freePort();
        Path config = dir.resolve("sentinel-" + port + ".conf");
        String text = String.join("\n",
                "port " + port,
                "bind 127.0.0.1",
                "dir " + dir,
                "logfile " + dir.resolve("sentinel-" + port + ".log"),
                "sentinel monitor " + masterName + " 127.0.0.1 " + primary.port() + " 2",
                "sentinel down-after-milliseconds " + masterName + " 1000",
                "sentinel failover-timeout " + masterName + " 10000",
                "sentinel parallel-syncs " + masterName + " 1", "");
        try {
            Files.writeString(config, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String sentinel = System.getenv(SENTINEL_ENV);
        List<String> command = sentinel == null || sentinel.isBlank()
                ? List.of(serverBinary(), config.toString(), "--sentinel")
                : List.of(sentinel, config.toString());
        return started(new Node(port, command, dir.resolve("sentinel-" + port + ".log")));
    }

    /** A node of a Redis Cluster (not yet part of one), failing over after a second of silence. */
    public Node clusterNode() {
        int port = freePort();
        return serverOn(port, "--cluster-enabled", "yes", "--cluster-config-file", "nodes-" + port + ".conf",
                "--cluster-node-timeout", "1000");
    }

    private Node serverOn(int port, String... settings) {
        List<String> command = new ArrayList<>(List.of(serverBinary(), "--port", Integer.toString(port),
                "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.toString(),
                // a replica (re)joining syncs at once, not after Redis 7's default 5 s of batching
                "--repl-diskless-sync-delay", "0",
                "--logfile", dir.resolve("redis-" + port + ".log").toString()));
        command.addAll(List.of(settings));
        return started(new Node(port, command, dir.resolve("redis-" + port + ".log")));
    }

    private Node started(Node node) {
        nodes.add(node);
        node.start();
        return node;
    }

    @Override
    public void close() {
        for (Node node : nodes) {
            node.kill();
        }
    }

    public static String serverBinary() {
        String configured = System.getenv(SERVER_ENV);
        if (configured != null && !configured.isBlank()) {
            return configured;
        }
        try {
            File bundled = ExecutableProvider.newJarResourceProvider().get();
            return bundled.getAbsolutePath();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Polls until the condition holds; fails with the message after the timeout. */
    public static void await(String what, Duration timeout, BooleanSupplier condition) {
        long until = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < until) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (RuntimeException notYet) {
                // a node still starting or gone: try again
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        throw new AssertionError("timed out after " + timeout.toSeconds() + " s waiting for: " + what);
    }

    private static int freePort() {
        try {
            return EmbeddedRedis.freePort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One process; {@link #kill()} is SIGKILL (no shutdown, no last writes), {@link #start()} again on its port. */
    public static final class Node {
        private final int port;
        private final List<String> command;
        private final Path log;
        private volatile Process process;

        Node(int port, List<String> command, Path log) {
            this.port = port;
            this.command = List.copyOf(command);
            this.log = log;
        }

        public int port() {
            return port;
        }

        public String url() {
            return "redis://127.0.0.1:" + port;
        }

        public synchronized void start() {
            try {
                process = new ProcessBuilder(command).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.resolveSibling(log.getFileName() + ".out").toFile()))
                        .start();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            await(this + " answers PING", Duration.ofSeconds(20), () -> {
                if (!process.isAlive()) {
                    throw new AssertionError(this + " exited: " + logTail());
                }
                try (Jedis jedis = jedis()) {
                    return "PONG".equals(jedis.ping());
                }
            });
        }

        /** SIGKILL, as a crashed host or an OOM kill would end it. */
        public synchronized void kill() {
            Process p = process;
            if (p != null && p.isAlive()) {
                p.destroyForcibly();
                try {
                    p.waitFor();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /** Starts a killed node again and waits until its Sentinel or Cluster has made it a replica. */
        public void restartAsReplica() {
            start();
            awaitReplicating();
        }

        /** Until this node is a replica with its link to the primary up (a full sync done). */
        public void awaitReplicating() {
            // Sentinel turns a restarted old primary into a replica only after about 10 s.
            await(this + " replicates", Duration.ofSeconds(60), () -> {
                try (Jedis jedis = jedis()) {
                    String info = jedis.info("replication");
                    return info.contains("role:slave") && info.contains("master_link_status:up");
                }
            });
        }

        /** SIGSTOP: the process stays connected but answers nothing, like a stalled host. */
        public void pause() {
            signal("-STOP");
        }

        /** SIGCONT after {@link #pause()}. */
        public void resume() {
            signal("-CONT");
        }

        private void signal(String signal) {
            try {
                int exit = new ProcessBuilder("kill", signal, Long.toString(process.pid())).inheritIO().start().waitFor();
                if (exit != 0) {
                    throw new IllegalStateException("kill " + signal + " exited " + exit);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        public Jedis jedis() {
            Jedis jedis = new Jedis("127.0.0.1", port, 2000);
            return jedis;
        }

        public String logTail() {
            try {
                List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
                return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
            } catch (IOException e) {
                return "(no log: " + e.getMessage() + ")";
            }
        }

        @Override
        public String toString() {
            return "redis node 127.0.0.1:" + port;
        }
    }
}
