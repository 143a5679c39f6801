package dev.baton.lock;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import dev.baton.redis.LockKeys;
import dev.baton.testing.RedisTestResource;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

@QuarkusTest
@WithTestResource(RedisTestResource.class)
class FenceScenariosTest {

    @Inject
    RedisDataSource redis;

    @Test
    void given_every_key_of_the_lcid_was_deleted_when_it_is_granted_again_then_the_fence_still_rises() {
        String lcid = unique("order");
        JsonPath first = acquire(lcid, "a").then().statusCode(200).extract().jsonPath();
        complete(lcid, first.getString("token"), "a").then().statusCode(200);

        // Eviction or expiry of everything Baton stored for this lcid.
        long deleted = redis.key().del(LockKeys.of("default", lcid).asList().toArray(String[]::new));
        assertThat(deleted).isPositive();
        assertThat(redis.key().exists(LockKeys.of("default", lcid).asList().toArray(String[]::new))).isZero();

        long second = acquire(lcid, "b").then().statusCode(200).extract().jsonPath().getLong("fence");
        assertThat(second).isGreaterThan(first.getLong("fence"));
    }

    @Test
    void given_a_stored_fence_ahead_of_the_clock_when_granted_then_the_fence_is_stored_plus_one() {
        String lcid = unique("order");
        long ahead = System.currentTimeMillis() * 1000 + 3_600_000_000L; // an hour ahead, in microseconds
        redis.value(String.class).set(LockKeys.of("default", lcid).fence(), Long.toString(ahead));

        long fence = acquire(lcid, "a").then().statusCode(200).extract().jsonPath().getLong("fence");

        assertThat(fence).isEqualTo(ahead + 1);
    }
}
