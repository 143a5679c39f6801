package dev.baton.testing;

import java.util.Map;


/** A primary and one replica on loopback; the service talks to the primary (standalone client). */
public class ReplicaPairResource implements io.quarkus.test.common.QuarkusTestResourceLifecycleManager {

    private static RedisNodes nodes;
    private static RedisNodes.Node primary;
    private static RedisNodes.Node replica;

    @Override
    public Map<String, String> start() {
        nodes = new RedisNodes();
        primary = nodes.server();
        replica = nodes.replicaOf(primary);
        replica.awaitReplicating();
        return Map.of("quarkus.redis.hosts", primary.url());
    }

    public static RedisNodes.Node primary() {
        return primary;
    }

    public static RedisNodes.Node replica() {
        return replica;
    }

    @Override
    public void stop() {
        if (nodes != null) {
            nodes.close();
        }
    }
}
