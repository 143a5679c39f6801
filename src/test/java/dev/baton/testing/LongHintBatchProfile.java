package dev.baton.testing;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/**
 * Claim-index hints wait {@value #BATCH_MS} ms to be written together instead of 10 ms, so that a
 * test's calls a few milliseconds apart surely fall into one batch window.
 */
public class LongHintBatchProfile implements QuarkusTestProfile {

    public static final int BATCH_MS = 200;

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("baton.claims.hint-batch", BATCH_MS + "ms");
    }
}
