package dev.baton.testing;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/** The HTTP access log on, as dev mode has it; authentication off (the test profile's default). */
public class AccessLogProfile implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("quarkus.http.access-log.enabled", "true");
    }
}
