package dev.baton.testing;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import redis.clients.jedis.Jedis;

/**
 * A Sentinel setup on loopback, as in production: a primary, one replica, three sentinels
 * (quorum 2, primary down after 1 s). The service under test finds the primary through the
 * sentinels (client type sentinel). {@link #failOver} kills the primary with SIGKILL.
 */
public class SentinelGroupResource implements io.quarkus.test.common.QuarkusTestResourceLifecycleManager {

    public static final String MASTER_NAME = "baton";

    private static RedisNodes nodes;
    private static List<RedisNodes.Node> servers;
    private static List<RedisNodes.Node> sentinels;

    @Override
    public Map<String, String> start() {
        nodes = new RedisNodes();
        RedisNodes.Node primary = nodes.server();
        RedisNodes.Node replica = nodes.replicaOf(primary);
        replica.awaitReplicating();
        servers = List.of(primary, replica);
        sentinels = List.of(nodes.sentinel(MASTER_NAME, primary), nodes.sentinel(MASTER_NAME, primary),
                nodes.sentinel(MASTER_NAME, primary));
        // A failover needs sentinels that know the replica and each other (learnt over hello messages).
        for (RedisNodes.Node sentinel : sentinels) {
            RedisNodes.await(sentinel + " sees 1 replica and 3 sentinels", Duration.ofSeconds(30), () -> {
                try (Jedis jedis = sentinel.jedis()) {
                    String info = jedis.info("sentinel");
                    return info.contains("status=ok") && info.contains("slaves=1") && info.contains("sentinels=3");
                }
            });
        }
        return Map.of("quarkus.redis.hosts", sentinels.stream().map(RedisNodes.Node::url).collect(Collectors.joining(",")),
                "quarkus.redis.client-type", "sentinel",
                "quarkus.redis.master-name", MASTER_NAME,
                "quarkus.redis.role", "master");
    }

    /** The node the sentinels name as primary now. */
    public static RedisNodes.Node primary() {
        for (RedisNodes.Node sentinel : sentinels) {
            try (Jedis jedis = sentinel.jedis()) {
                int port = Integer.parseInt(jedis.sentinelGetMasterAddrByName(MASTER_NAME).get(1));
                return servers.stream().filter(node -> node.port() == port).findFirst().orElseThrow();
            } catch (RuntimeException down) {
                // ask the next sentinel
            }
        }
        throw new IllegalStateException("no sentinel answers");
    }

    /**
     * SIGKILL on the primary; answers once the sentinels have promoted the replica (how long that
     * took, ms). The killed node stays down until {@link #restart}.
     */
    public static long failOver(RedisNodes.Node primary) {
        long started = System.nanoTime();
        primary.kill();
        RedisNodes.await("the sentinels promote the replica", Duration.ofSeconds(30), () -> primary() != primary);
        return (System.nanoTime() - started) / 1_000_000;
    }

    /** Starts the killed node again (empty): the sentinels turn it into a replica of the new primary. */
    public static void restart(RedisNodes.Node node) {
        node.restartAsReplica();
    }

    @Override
    public void stop() {
        if (nodes != null) {
            nodes.close();
        }
    }
}
