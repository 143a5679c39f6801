package dev.baton.testing;

import java.util.HashMap;
import java.util.Map;

/** Authentication on, and Baton's own logging at DEBUG: the most a log could ever say. */
public class SecretsProfile extends AuthEnabledProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> config = new HashMap<>(super.getConfigOverrides());
        config.put("quarkus.log.category.\"dev.baton\".level", "DEBUG");
        config.put("quarkus.log.category.\"io.quarkus.security\".level", "DEBUG");
        config.put("quarkus.log.category.\"io.quarkus.vertx.http.runtime.security\".level", "DEBUG");
        return config;
    }
}
