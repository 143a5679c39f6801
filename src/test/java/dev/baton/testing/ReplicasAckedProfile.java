package dev.baton.testing;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/** Durable acknowledgements: answers wait until one replica confirmed the write (500 ms at most). */
public class ReplicasAckedProfile implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("baton.backend.replicas-acked", "1", "baton.backend.replicas-timeout", "500ms");
    }
}
