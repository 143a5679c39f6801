package dev.baton.lock;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.request;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import dev.baton.redis.LockKeys;
import dev.baton.testing.RedisTestResource;
import dev.baton.testing.ShortRetentionProfile;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;

/**
 * Memory does not grow with the number of lcids ever seen: an idle lcid leaves nothing in Redis
 * once its retention has passed (and not before the records it keeps are due), while a busy
 * lcid's keys never expire under its holder or its queue. Retentions are shortened
 * ({@link ShortRetentionProfile}) so that expiry happens while the test watches; what is checked
 * is what a user sees (the API's answers) and what is left in Redis, whatever the key layout.
 */
@QuarkusTest
@TestProfile(ShortRetentionProfile.class)
@WithTestResource(RedisTestResource.class)
class KeyExpiryScenariosTest {

    private static final long IDLE_MS = ShortRetentionProfile.IDLE_MS;
    private static final long RESULT_MS = ShortRetentionProfile.RESULT_MS;

    @Inject
    RedisDataSource redis;

    @Test
    void given_a_released_lcid_then_its_result_stays_until_due_and_then_nothing_of_it_is_left() throws Exception {
        String lcid = unique("order");
        JsonPath a = acquire(lcid, fields("requestId", "a", "payload", Map.of("step", 1))).then().statusCode(200)
                .extract().jsonPath();
        complete(lcid, fields("token", a.getString("token"), "requestId", "a", "result", Map.of("ok", true)))
                .then().statusCode(200);
        long released = System.currentTimeMillis();

        // Past the idle retention, the result (kept longer) is still there for replays and readers.
        Thread.sleep(IDLE_MS + 500);
        assertThat(System.currentTimeMillis() - released).isLessThan(RESULT_MS);
        JsonPath view = request(lcid, "a").then().statusCode(200).extract().jsonPath();
        assertThat(view.getString("state")).isEqualTo("DONE");
        assertThat(view.getBoolean("result.ok")).isTrue();
        assertThat(keysLeft(lcid)).isNotEmpty().allSatisfy(key -> assertThat(redis.key().pttl(key)).isPositive());

        awaitNothingLeft(lcid, released + RESULT_MS + 3000);
        request(lcid, "a").then().statusCode(404);
    }

    @Test
    void given_a_busy_lcid_then_none_of_its_keys_expire_under_its_holder_or_its_queue() throws Exception {
        String lcid = unique("order");
        JsonPath a = acquire(lcid, "a").then().statusCode(200).extract().jsonPath();
        complete(lcid, a.getString("token"), "a").then().statusCode(200);

        // idle -> busy: a holder, then a queue behind it
        JsonPath b = acquire(lcid, "b").then().statusCode(200).extract().jsonPath();
        acquire(lcid, fields("requestId", "c", "payload", Map.of("line", 7))).then().statusCode(202);
        acquire(lcid, "d").then().statusCode(202);
        assertThat(keysLeft(lcid)).isNotEmpty().allSatisfy(key -> assertThat(redis.key().pttl(key)).isEqualTo(-1L));

        // Longer than every retention: nothing of the busy lcid may go.
        Thread.sleep(RESULT_MS + 1000);
        JsonPath next = complete(lcid, b.getString("token"), "b").then().statusCode(200).extract().jsonPath();
        assertThat(next.getString("status")).isEqualTo("NEXT");
        assertThat(next.getString("request.requestId")).isEqualTo("c");
        assertThat(next.getInt("request.payload.line")).isEqualTo(7);
        assertThat(next.getLong("fence")).isGreaterThan(b.getLong("fence"));
        assertThat(keysLeft(lcid)).allSatisfy(key -> assertThat(redis.key().pttl(key)).isEqualTo(-1L));

        // Busy with only a holder (the queue is empty now): still nothing expires.
        next = complete(lcid, next.getString("token"), "c").then().statusCode(200).extract().jsonPath();
        assertThat(next.getString("request.requestId")).isEqualTo("d");
        Thread.sleep(IDLE_MS + 500);
        assertThat(request(lcid, "d").then().statusCode(200).extract().jsonPath().getString("state")).isEqualTo("ACTIVE");
        assertThat(keysLeft(lcid)).allSatisfy(key -> assertThat(redis.key().pttl(key)).isEqualTo(-1L));

        // busy -> idle
        complete(lcid, next.getString("token"), "d").then().body("status", org.hamcrest.Matchers.equalTo("RELEASED"));
        assertThat(keysLeft(lcid)).isNotEmpty().allSatisfy(key -> assertThat(redis.key().pttl(key)).isPositive());
        awaitNothingLeft(lcid, System.currentTimeMillis() + RESULT_MS + 3000);
    }

    @Test
    void given_an_idle_lcid_when_a_finished_request_is_replayed_then_it_still_leaves_nothing_behind() throws Exception {
        String lcid = unique("order");
        JsonPath a = acquire(lcid, "a").then().statusCode(200).extract().jsonPath();
        complete(lcid, a.getString("token"), "a").then().statusCode(200);
        long released = System.currentTimeMillis();

        acquire(lcid, "a").then().statusCode(409);

        awaitNothingLeft(lcid, released + RESULT_MS + 3000);
    }

    /** Waits for every key of the lcid to be gone, failing at the deadline (ms since the epoch). */
    private void awaitNothingLeft(String lcid, long deadline) throws InterruptedException {
        while (!keysLeft(lcid).isEmpty() && System.currentTimeMillis() < deadline) {
            Thread.sleep(200);
        }
        assertThat(keysLeft(lcid)).as("keys of idle lcid %s after its retention", lcid).isEmpty();
    }

    /**
     * The keys of the lcid that exist. On one server, every key with the lcid's hash tag (so a key
     * the layout forgot to list would show); on a Cluster, where a pattern would need every node,
     * the keys the service names for it.
     */
    private List<String> keysLeft(String lcid) {
        LockKeys keys = LockKeys.of("default", lcid);
        List<String> left = new ArrayList<>();
        if (!RedisTestResource.clusterMode()) {
            left.addAll(redis.key().keys("baton:{default|" + lcid + "}*"));
        }
        for (String key : keys.asList()) {
            if (!left.contains(key) && redis.key().exists(key)) {
                left.add(key);
            }
        }
        return left;
    }
}
