package dev.baton.lock;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.heartbeat;
import static dev.baton.testing.Api.lock;
import static dev.baton.testing.Api.request;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.time.Instant;

import org.junit.jupiter.api.Test;

import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

/** The test profile sets baton.max-attempts=3; leases here are the minimum, 500 ms. */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class LeaseScenariosTest {

    private static final int SHORT_LEASE = 500;

    @Test
    void given_a_live_holder_when_it_heartbeats_then_its_lease_is_renewed() throws InterruptedException {
        String lcid = unique("order");
        JsonPath granted = acquire(lcid, fields("requestId", "a", "leaseMs", SHORT_LEASE)).then().extract().jsonPath();

        for (int i = 0; i < 4; i++) {
            Thread.sleep(300);
            JsonPath beat = heartbeat(lcid, fields("token", granted.getString("token"))).then().statusCode(200)
                    .body("status", equalTo("ACQUIRED"))
                    .body("requestId", equalTo("a"))
                    .body("leaseMs", equalTo(SHORT_LEASE))
                    .extract().jsonPath();
            assertThat(beat.getLong("fence")).isEqualTo(granted.getLong("fence"));
        }

        // 1.2 s after a 500 ms grant, the lock is still ours because of the heartbeats.
        complete(lcid, granted.getString("token"), "a").then().statusCode(200).body("status", equalTo("RELEASED"));
    }

    @Test
    void given_a_holder_when_it_heartbeats_with_a_new_lease_then_that_lease_applies() {
        String lcid = unique("order");
        String token = acquire(lcid, fields("requestId", "a", "leaseMs", SHORT_LEASE)).then().extract().path("token");

        String expiresAt = heartbeat(lcid, fields("token", token, "leaseMs", 60000)).then().statusCode(200)
                .body("leaseMs", equalTo(60000)).extract().path("expiresAt");

        assertThat(Instant.parse(expiresAt)).isAfter(Instant.now().plusSeconds(50));
        assertThat(lock(lcid).getLong("leaseRemainingMs")).isGreaterThan(50000);
    }

    @Test
    void given_a_lease_that_ran_out_when_the_holder_heartbeats_or_completes_then_409_lock_lost() throws InterruptedException {
        String lcid = unique("order");
        String token = acquire(lcid, fields("requestId", "a", "leaseMs", SHORT_LEASE)).then().extract().path("token");
        Thread.sleep(SHORT_LEASE + 200);

        heartbeat(lcid, fields("token", token)).then().statusCode(409).body("code", equalTo("LOCK_LOST"));
        complete(lcid, token, "a").then().statusCode(409).body("code", equalTo("LOCK_LOST"));
        assertThat(lock(lcid).getBoolean("held")).isFalse();
    }

    @Test
    void given_a_dead_holder_when_someone_acquires_then_its_request_comes_back_first_with_attempt_plus_one()
            throws InterruptedException {
        String lcid = unique("order");
        acquire(lcid, fields("requestId", "orphan", "leaseMs", SHORT_LEASE, "payload", "keep me")).then().statusCode(200);
        acquire(lcid, "waiting").then().statusCode(202);
        Thread.sleep(SHORT_LEASE + 200);

        JsonPath next = acquire(lcid, "newcomer").then().statusCode(200)
                .body("status", equalTo("NEXT"))
                .body("request.requestId", equalTo("orphan"))
                .body("request.attempt", equalTo(2))
                .body("request.payload", equalTo("keep me"))
                .extract().jsonPath();

        complete(lcid, next.getString("token"), "orphan").then().body("request.requestId", equalTo("waiting"));
        complete(lcid, next.getString("token"), "waiting").then().body("request.requestId", equalTo("newcomer"));
    }

    @Test
    void given_a_request_whose_holders_keep_dying_when_max_attempts_is_reached_then_it_is_dead()
            throws InterruptedException {
        String lcid = unique("order");
        acquire(lcid, fields("requestId", "poison", "leaseMs", SHORT_LEASE)).then().statusCode(200);
        for (int attempt = 2; attempt <= 3; attempt++) {
            Thread.sleep(SHORT_LEASE + 150);
            acquire(lcid, fields("requestId", "rescuer-" + attempt, "leaseMs", SHORT_LEASE)).then().statusCode(200)
                    .body("request.requestId", equalTo("poison"))
                    .body("request.attempt", equalTo(attempt));
        }
        Thread.sleep(SHORT_LEASE + 150);

        // The third holder died too: max-attempts is 3, so the next grant finds it DEAD and skips it.
        acquire(lcid, fields("requestId", "after", "leaseMs", SHORT_LEASE)).then().statusCode(200)
                .body("request.requestId", equalTo("rescuer-2"));
        request(lcid, "poison").then().statusCode(200)
                .body("state", equalTo("DEAD"))
                .body("attempt", equalTo(3))
                .body("reason", equalTo("lease expired"));
    }
}
