package dev.baton.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import redis.clients.jedis.Jedis;

/**
 * A Redis Cluster with replicas on loopback: 3 primaries with one replica each, slots split
 * evenly, node timeout 1 s (a replica takes over about 2 s after its primary went silent).
 * {@link #failOver} kills one primary with SIGKILL.
 */
public class ClusterWithReplicasResource implements io.quarkus.test.common.QuarkusTestResourceLifecycleManager {

    private static final int SLOTS = 16384;

    private static RedisNodes nodes;
    private static List<RedisNodes.Node> all;

    @Override
    public Map<String, String> start() {
        nodes = new RedisNodes();
        List<RedisNodes.Node> primaries = List.of(nodes.clusterNode(), nodes.clusterNode(), nodes.clusterNode());
        List<RedisNodes.Node> replicas = List.of(nodes.clusterNode(), nodes.clusterNode(), nodes.clusterNode());
        all = new ArrayList<>(primaries);
        all.addAll(replicas);
        try (Jedis first = primaries.get(0).jedis()) {
            for (RedisNodes.Node node : all.subList(1, all.size())) {
                first.clusterMeet("127.0.0.1", node.port());
            }
        }
        for (int i = 0; i < primaries.size(); i++) {
            int from = i * SLOTS / primaries.size();
            int to = (i + 1) * SLOTS / primaries.size();
            try (Jedis jedis = primaries.get(i).jedis()) {
                jedis.clusterAddSlots(IntStream.range(from, to).toArray());
            }
        }
        for (RedisNodes.Node node : all) {
            RedisNodes.await(node + " knows all 6 nodes", Duration.ofSeconds(30), () -> {
                try (Jedis jedis = node.jedis()) {
                    return jedis.clusterNodes().lines().filter(line -> line.contains("connected")).count() == all.size();
                }
            });
        }
        for (int i = 0; i < replicas.size(); i++) {
            String primaryId;
            try (Jedis jedis = primaries.get(i).jedis()) {
                primaryId = jedis.clusterMyId();
            }
            try (Jedis jedis = replicas.get(i).jedis()) {
                jedis.clusterReplicate(primaryId);
            }
        }
        for (RedisNodes.Node replica : replicas) {
            replica.awaitReplicating();
        }
        for (RedisNodes.Node node : all) {
            RedisNodes.await(node + " sees the cluster ok", Duration.ofSeconds(30), () -> {
                try (Jedis jedis = node.jedis()) {
                    return jedis.clusterInfo().contains("cluster_state:ok");
                }
            });
        }
        String hosts = primaries.stream().map(RedisNodes.Node::url).collect(Collectors.joining(","));
        return Map.of("quarkus.redis.hosts", hosts, "quarkus.redis.client-type", "cluster",
                "quarkus.redis.replicas", "never");
    }

    /** The first node that is a primary now. */
    public static RedisNodes.Node primary() {
        for (RedisNodes.Node node : all) {
            try (Jedis jedis = node.jedis()) {
                if (jedis.info("replication").contains("role:master")) {
                    return node;
                }
            } catch (RuntimeException down) {
                // a killed node
            }
        }
        throw new IllegalStateException("no primary answers");
    }

    /** SIGKILL on a primary; answers once its replica has taken over and the cluster is ok (ms). */
    public static long failOver(RedisNodes.Node primary) {
        String replicaOfIt;
        try (Jedis jedis = primary.jedis()) {
            String id = jedis.clusterMyId();
            replicaOfIt = jedis.clusterNodes().lines().filter(line -> line.contains("slave " + id))
                    .map(line -> line.split(" ")[1]).findFirst().orElseThrow();
        }
        int replicaPort = Integer.parseInt(replicaOfIt.substring(replicaOfIt.indexOf(':') + 1).split("@")[0]);
        RedisNodes.Node replica = all.stream().filter(node -> node.port() == replicaPort).findFirst().orElseThrow();
        long started = System.nanoTime();
        primary.kill();
        RedisNodes.await("the replica takes over", Duration.ofSeconds(30), () -> {
            try (Jedis jedis = replica.jedis()) {
                return jedis.info("replication").contains("role:master") && jedis.clusterInfo().contains("cluster_state:ok");
            }
        });
        return (System.nanoTime() - started) / 1_000_000;
    }

    /** Starts the killed node again with its nodes.conf: it rejoins as a replica of the new primary. */
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
