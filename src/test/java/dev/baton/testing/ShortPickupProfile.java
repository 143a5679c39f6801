package dev.baton.testing;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/** Wait-mode turns not picked up end after {@value #PICKUP_MS} ms instead of 5 s. */
public class ShortPickupProfile implements QuarkusTestProfile {

    public static final int PICKUP_MS = 1500;

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("baton.wait.pickup-ms", Integer.toString(PICKUP_MS), "baton.wait.recheck-ms", "500");
    }
}
