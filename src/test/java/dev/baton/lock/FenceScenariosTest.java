package dev.baton.lock;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import dev.baton.redis.LockKeys;
import dev.baton.testing.RedisTestResource;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

/**
 * The fence rises across every grant of an lcid, also after everything Baton stored for it was
 * deleted or expired: a database that kept the last fence it saw must see every later grant's
 * fence above it, or it would take a stale holder's write for a new one.
 */
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

        // Eviction, expiry or an operator's DEL of everything Baton stored for this lcid.
        List<String> keys = keysOf(lcid);
        assertThat(keys).isNotEmpty();
        redis.key().del(keys.toArray(String[]::new));
        assertThat(keysOf(lcid)).isEmpty();

        long second = acquire(lcid, "b").then().statusCode(200).extract().jsonPath().getLong("fence");
        assertThat(second).isGreaterThan(first.getLong("fence"));
    }

    @Test
    void given_many_grants_in_a_row_then_each_fence_is_above_the_one_before() {
        String lcid = unique("order");
        long last = 0;
        for (int i = 0; i < 50; i++) {
            JsonPath granted = acquire(lcid, "r" + i).then().statusCode(200).extract().jsonPath();
            assertThat(granted.getLong("fence")).isGreaterThan(last);
            last = granted.getLong("fence");
            complete(lcid, granted.getString("token"), "r" + i).then().statusCode(200);
        }
    }

    /**
     * A failover to a server whose clock is behind the old primary's: the fence the lcid keeps is
     * then ahead of the clock the next grant reads, and the grant must still go above it. The
     * stored fence is written where layout {@value dev.baton.redis.LayoutVersion#CURRENT} keeps it
     * (docs/internals/redis-layout.md), since no API call can move the server's clock.
     */
    @Test
    void given_a_stored_fence_ahead_of_the_clock_when_granted_then_the_fence_is_above_it() {
        String lcid = unique("order");
        long ahead = System.currentTimeMillis() * 1000 + 3_600_000_000L; // an hour ahead, in microseconds
        redis.hash(String.class).hset(LockKeys.of("default", lcid).state(), "fence", Long.toString(ahead));

        JsonPath granted = acquire(lcid, "a").then().statusCode(200).extract().jsonPath();
        assertThat(granted.getLong("fence")).isEqualTo(ahead + 1);
        complete(lcid, granted.getString("token"), "a").then().statusCode(200);
        assertThat(acquire(lcid, "b").then().statusCode(200).extract().jsonPath().getLong("fence")).isEqualTo(ahead + 2);
    }

    /** Every key of the lcid that exists (by its hash tag on one server; the named ones on a Cluster). */
    private List<String> keysOf(String lcid) {
        List<String> found = new ArrayList<>();
        if (!RedisTestResource.clusterMode()) {
            found.addAll(redis.key().keys("baton:{default|" + lcid + "}*"));
        }
        for (String key : LockKeys.of("default", lcid).asList()) {
            if (!found.contains(key) && redis.key().exists(key)) {
                found.add(key);
            }
        }
        return found;
    }
}
