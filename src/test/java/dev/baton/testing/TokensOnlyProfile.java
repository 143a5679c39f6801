package dev.baton.testing;

import java.util.HashMap;
import java.util.Map;

/**
 * Workload tokens only (API keys turned off), and the security logging at DEBUG: the most a log
 * could ever say about a token.
 */
public class TokensOnlyProfile extends WorkloadIdentityProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> config = new HashMap<>(super.getConfigOverrides());
        config.put("baton.auth.api-keys-enabled", "false");
        return SecretsProfile.debugLogging(config);
    }
}
