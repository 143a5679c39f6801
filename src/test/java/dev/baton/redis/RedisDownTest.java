package dev.baton.redis;

import org.junit.jupiter.api.Test;

import dev.baton.testing.NoRedisResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;

@QuarkusTest
@WithTestResource(NoRedisResource.class)
class RedisDownTest extends BackendScenarios {

    @Test
    void given_redis_refuses_connections_when_clients_call_then_503_within_two_seconds() {
        then_every_operation_answers_503_backend_unavailable_quickly();
    }
}
