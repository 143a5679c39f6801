package dev.baton.testing;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/**
 * Authentication on, with a tenant of its own ("ops") that has an admin key and a worker key: the
 * tenant-wide operator listings (busy lcids) then show only what the scenarios of this profile made.
 */
public class OperatorProfile implements QuarkusTestProfile {

    public static final String ADMIN_KEY = "test-admin-key-ops-3c9a7e1d52";
    public static final String WORKER_KEY = "test-worker-key-ops-8d2f6b4a19";

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("baton.auth.enabled", "true",
                "baton.auth.api-keys", "ops:" + AuthEnabledProfile.sha256(ADMIN_KEY) + ":admin,ops:"
                        + AuthEnabledProfile.sha256(WORKER_KEY));
    }
}
