package dev.baton.testing;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/** A replica that holds at most two long-polls (baton.wait.max-waiters). */
public class TwoLongPollsProfile implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("baton.wait.max-waiters", "2");
    }
}
