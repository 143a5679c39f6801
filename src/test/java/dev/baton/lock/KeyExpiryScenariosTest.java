package dev.baton.lock;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import dev.baton.config.BatonConfig;
import dev.baton.redis.LockKeys;
import dev.baton.testing.RedisTestResource;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

/**
 * An idle lcid's keys expire (after the records they keep are due); a busy one's never do. The
 * scripts change TTLs only when an lcid turns idle or busy, so these scenarios walk through both
 * transitions and the busy paths in between (queue, handoff) that leave TTLs alone.
 */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class KeyExpiryScenariosTest {

    @Inject
    RedisDataSource redis;

    @Inject
    BatonConfig config;

    @Test
    void given_a_released_lcid_then_its_keys_expire_but_not_before_its_results_are_due() {
        String lcid = unique("order");
        JsonPath a = acquire(lcid, fields("requestId", "a", "payload", Map.of("step", 1))).then().statusCode(200)
                .extract().jsonPath();
        complete(lcid, fields("token", a.getString("token"), "requestId", "a", "result", Map.of("ok", true)))
                .then().statusCode(200);

        Map<String, Long> ttls = ttls(lcid);
        assertThat(ttls).containsOnlyKeys("requests", "fence", "purge");
        long floor = Math.max(config.resultRetention().toMillis(), config.idleRetention().toMillis()) - 60_000;
        assertThat(ttls.values()).allSatisfy(ttl -> assertThat(ttl).isGreaterThan(floor));
        // The payload went with the request; the result stays for replays.
        String requests = LockKeys.of("default", lcid).requests();
        assertThat(redis.hash(String.class).hexists(requests, "p:a")).isFalse();
        assertThat(redis.hash(String.class).hexists(requests, "r:a")).isTrue();
    }

    @Test
    void given_an_idle_lcid_when_it_is_taken_again_then_no_key_expires_until_it_is_idle_again() {
        String lcid = unique("order");
        JsonPath a = acquire(lcid, "a").then().statusCode(200).extract().jsonPath();
        complete(lcid, a.getString("token"), "a").then().statusCode(200);
        assertThat(ttls(lcid).values()).allSatisfy(ttl -> assertThat(ttl).isPositive());

        // idle -> busy
        JsonPath b = acquire(lcid, "b").then().statusCode(200).extract().jsonPath();
        assertThat(ttls(lcid).values()).containsOnly(-1L);

        // busy, and busy again after each queue and handoff step
        acquire(lcid, fields("requestId", "c", "payload", Map.of("line", 7))).then().statusCode(202);
        acquire(lcid, "d").then().statusCode(202);
        assertThat(ttls(lcid)).containsKeys("lock", "queue").doesNotContainValue(0L);
        assertThat(ttls(lcid).values()).containsOnly(-1L);

        JsonPath next = complete(lcid, b.getString("token"), "b").then().statusCode(200).extract().jsonPath();
        assertThat(next.getString("status")).isEqualTo("NEXT");
        assertThat(next.getString("request.requestId")).isEqualTo("c");
        assertThat(next.getInt("request.payload.line")).isEqualTo(7);
        assertThat(ttls(lcid).values()).containsOnly(-1L);

        next = complete(lcid, next.getString("token"), "c").then().statusCode(200).extract().jsonPath();
        assertThat(next.getString("request.requestId")).isEqualTo("d");
        assertThat(ttls(lcid).values()).containsOnly(-1L);

        // busy -> idle
        complete(lcid, next.getString("token"), "d").then().statusCode(200);
        assertThat(ttls(lcid)).containsOnlyKeys("requests", "fence", "purge");
        assertThat(ttls(lcid).values()).allSatisfy(ttl -> assertThat(ttl).isPositive());
    }

    @Test
    void given_an_idle_lcid_when_a_finished_request_is_replayed_then_its_keys_still_expire() {
        String lcid = unique("order");
        JsonPath a = acquire(lcid, "a").then().statusCode(200).extract().jsonPath();
        complete(lcid, a.getString("token"), "a").then().statusCode(200);

        acquire(lcid, "a").then().statusCode(409);

        assertThat(ttls(lcid)).containsOnlyKeys("requests", "fence", "purge");
        assertThat(ttls(lcid).values()).allSatisfy(ttl -> assertThat(ttl).isPositive());
    }

    /** PTTL of each key of the lcid that exists, by its role (-1: no expiry). */
    private Map<String, Long> ttls(String lcid) {
        LockKeys keys = LockKeys.of("default", lcid);
        Map<String, Long> ttls = new LinkedHashMap<>();
        String[] roles = { "lock", "queue", "requests", "fence", "purge" };
        for (int i = 0; i < roles.length; i++) {
            String key = keys.asList().get(i);
            if (redis.key().exists(key)) {
                ttls.put(roles[i], redis.key().pttl(key));
            }
        }
        return ttls;
    }
}
