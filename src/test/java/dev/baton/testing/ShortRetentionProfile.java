package dev.baton.testing;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/**
 * Idle lcids are kept {@value #IDLE_MS} ms and finished requests {@value #RESULT_MS} ms, instead
 * of a day and an hour, so that expiry can be watched happen.
 */
public class ShortRetentionProfile implements QuarkusTestProfile {

    public static final int IDLE_MS = 1000;
    public static final int RESULT_MS = 4000;

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("baton.idle-retention", IDLE_MS + "ms", "baton.result-retention", RESULT_MS + "ms");
    }
}
