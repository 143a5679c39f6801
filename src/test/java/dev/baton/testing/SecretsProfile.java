package dev.baton.testing;

import java.util.HashMap;
import java.util.Map;

/** Authentication on, and Baton's own logging at DEBUG: the most a log could ever say. */
public class SecretsProfile extends AuthEnabledProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return debugLogging(super.getConfigOverrides());
    }

    /** Baton's and Quarkus security's logging at DEBUG, on top of a profile's settings. */
    static Map<String, String> debugLogging(Map<String, String> settings) {
        Map<String, String> config = new HashMap<>(settings);
        config.put("quarkus.log.category.\"dev.baton\".level", "DEBUG");
        config.put("quarkus.log.category.\"io.quarkus.security\".level", "DEBUG");
        config.put("quarkus.log.category.\"io.quarkus.vertx.http.runtime.security\".level", "DEBUG");
        return config;
    }
}
