package dev.baton.testing;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/**
 * Long-polls re-checked only every {@value #RECHECK_MS} ms: a waiter answered within a fraction
 * of that was woken by a notification, not found by its re-check.
 */
public class SlowRecheckProfile implements QuarkusTestProfile {

    public static final int RECHECK_MS = 10_000;

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("baton.wait.recheck-ms", Integer.toString(RECHECK_MS), "baton.wait.pickup-ms", "30000");
    }
}
