package dev.baton.testing;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/**
 * Authentication on, with two tenants of their own: the late-heartbeat warning is said once per
 * tenant and service replica, so no other test's heartbeats may have used it up.
 */
public class LeaseWarningProfile implements QuarkusTestProfile {

    public static final String KEY_A = "test-key-lease-a-6e1b9d3c7f";
    public static final String KEY_B = "test-key-lease-b-2a7c5e8d1b";

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("baton.auth.enabled", "true",
                "baton.auth.api-keys", "lease-a:" + AuthEnabledProfile.sha256(KEY_A) + ",lease-b:"
                        + AuthEnabledProfile.sha256(KEY_B));
    }
}
