package dev.baton.testing;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/** Authentication on, with two tenants; team-a also has an admin key. Only digests are configured. */
public class AuthEnabledProfile implements QuarkusTestProfile {

    public static final String KEY_A = "test-key-team-a-9f2c1d7e4b";
    public static final String KEY_B = "test-key-team-b-5a8e3c1f0d";
    public static final String ADMIN_KEY_A = "test-admin-key-team-a-7b4d2e9c";

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("baton.auth.enabled", "true",
                "baton.auth.api-keys", "team-a:" + sha256(KEY_A) + ",team-b:" + sha256(KEY_B) + ",team-a:"
                        + sha256(ADMIN_KEY_A) + ":admin");
    }

    public static String sha256(String key) {
        return dev.baton.security.ApiKeys.sha256(key);
    }
}
