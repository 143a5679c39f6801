package dev.baton.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import dev.baton.ops.EmbeddedRedis;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/**
 * A real redis-server for the tests: the binary bundled in embedded-redis, started on a free
 * port. Set {@code BATON_TEST_REDIS_URL} (e.g. redis://127.0.0.1:6390) to run the same tests
 * against an external Redis or Valkey instead.
 */
public class RedisTestResource implements QuarkusTestResourceLifecycleManager {

    public static final String EXTERNAL_URL_ENV = "BATON_TEST_REDIS_URL";
    /** Set to true to run against a local 3-master Redis Cluster (client type cluster). */
    public static final String CLUSTER_ENV = "BATON_TEST_REDIS_CLUSTER";

    private EmbeddedRedis embedded;
    private redis.embedded.RedisShardedCluster cluster;

    public static boolean clusterMode() {
        return Boolean.parseBoolean(System.getenv(CLUSTER_ENV));
    }

    /** The Redis the tests use: the external one when configured, else a fresh embedded one. */
    public static String externalUrl() {
        String external = System.getenv(EXTERNAL_URL_ENV);
        return external == null || external.isBlank() ? null : external;
    }

    @Override
    public Map<String, String> start() {
        if (clusterMode()) {
            return startCluster();
        }
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

    /** Three masters, no replicas, slots split evenly: the smallest real Redis Cluster. */
    private Map<String, String> startCluster() {
        try {
            List<Integer> ports = List.of(EmbeddedRedis.freePort(), EmbeddedRedis.freePort(), EmbeddedRedis.freePort());
            cluster = redis.embedded.RedisShardedCluster.newRedisCluster()
                    .serverPorts(ports) // before the shards, which take their ports from it
                    .shard("master1", 0).shard("master2", 0).shard("master3", 0)
                    .initializationTimeout(java.time.Duration.ofSeconds(20))
                    .build();
            cluster.start();
            awaitEveryNodeSeesTheWholeCluster(ports);
            String hosts = ports.stream().map(p -> "redis://127.0.0.1:" + p).collect(Collectors.joining(","));
            return Map.of("quarkus.redis.hosts", hosts, "quarkus.redis.client-type", "cluster",
                    "quarkus.redis.replicas", "never");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The cluster is formed when one node says so; the others learn the slot map by gossip a
     * moment later. A client that reads CLUSTER SLOTS from a node that does not know every slot yet
     * has no node for some keys (and the Vert.x client then fails those calls), so the service may
     * start only when every node answers cluster_state:ok with all three masters known.
     */
    private static void awaitEveryNodeSeesTheWholeCluster(List<Integer> ports) {
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(20).toNanos();
        for (int port : ports) {
            try (redis.clients.jedis.Jedis node = new redis.clients.jedis.Jedis("127.0.0.1", port)) {
                while (true) {
                    String info = node.clusterInfo();
                    if (info.contains("cluster_state:ok") && info.contains("cluster_known_nodes:" + ports.size())
                            && info.contains("cluster_slots_assigned:16384")) {
                        break;
                    }
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("the test cluster did not converge on node " + port + ":\n" + info);
                    }
                    Thread.sleep(20);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    @Override
    public void stop() {
        if (cluster != null) {
            try {
                cluster.stop();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        if (embedded != null) {
            try {
                embedded.stop();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
