package dev.baton.testing;

import java.io.IOException;

import dev.baton.ops.EmbeddedRedis;

/** For tests that start the packaged service: the Redis of the CI pass, or one of the test's own. */
public record TestRedis(EmbeddedRedis embedded, String url) {

    public static TestRedis start() throws IOException {
        if (RedisTestResource.externalUrl() != null) {
            return new TestRedis(null, RedisTestResource.externalUrl());
        }
        EmbeddedRedis embedded = EmbeddedRedis.start();
        return new TestRedis(embedded, embedded.url());
    }

    public void close() throws IOException {
        if (embedded != null) {
            embedded.stop();
        }
    }
}
