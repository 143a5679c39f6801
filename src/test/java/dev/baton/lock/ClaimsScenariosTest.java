package dev.baton.lock;

import static dev.baton.testing.Api.abort;
import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.heartbeat;
import static dev.baton.testing.Api.lock;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.baton.testing.ClaimWorker;
import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * Workers that only call POST /v1/claims rescue lcids nobody acquires any more. Orphans left by
 * other test classes may be claimed too: these workers process whatever they are given.
 */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class ClaimsScenariosTest {

    @Test
    void given_a_dead_holder_with_three_queued_and_no_new_traffic_when_workers_only_claim_then_all_run_in_order()
            throws InterruptedException {
        String lcid = unique("order");
        String token = acquire(lcid, fields("requestId", "in-flight", "leaseMs", 600_000)).then().statusCode(200)
                .extract().path("token");
        for (int i = 1; i <= 3; i++) {
            acquire(lcid, fields("requestId", "q" + i, "payload", Map.of("n", i))).then().statusCode(202);
        }
        // Its last heartbeat asks for half a second (however slow the first calls of a fresh service
        // were), then the holder dies: its lease runs out, and nobody acquires this lcid again.
        heartbeat(lcid, fields("token", token, "leaseMs", 500)).then().statusCode(200);
        Thread.sleep(700);

        List<String> processed = ClaimWorker.drain();

        assertThat(processed.stream().filter(p -> p.startsWith(lcid + "/")).toList())
                .containsExactly(lcid + "/in-flight#2", lcid + "/q1#1", lcid + "/q2#1", lcid + "/q3#1");
        assertThat(lock(lcid).getBoolean("held")).isFalse();
        assertThat(lock(lcid).getInt("queueLength")).isZero();
        ClaimWorker.claim().then().statusCode(204);
    }

    @Test
    void given_a_holder_that_shortened_its_lease_and_died_when_workers_only_claim_then_they_get_its_lcid_once_that_lease_ran_out()
            throws InterruptedException {
        String lcid = unique("order");
        String token = acquire(lcid, fields("requestId", "in-flight", "leaseMs", 600_000)).then().statusCode(200)
                .extract().path("token");
        acquire(lcid, "waiting").then().statusCode(202);
        heartbeat(lcid, fields("token", token, "leaseMs", 500)).then().statusCode(200);
        Thread.sleep(700); // the holder died: the lease it asked for last ran out

        assertThat(ClaimWorker.drainForOneSecond(lcid)).containsExactly(lcid + "/in-flight#2", lcid + "/waiting#1");
    }

    @Test
    void given_a_holder_that_aborted_with_requests_waiting_when_a_worker_claims_then_it_gets_them_at_once()
            throws InterruptedException {
        String lcid = unique("order");
        String token = acquire(lcid, "first").then().extract().path("token");
        acquire(lcid, "waiting").then().statusCode(202);
        abort(lcid, fields("requestId", "first", "token", token)).then().body("pending", equalTo(1));

        // As a polling worker: the abort's claim hint reaches the index within the hint-batch
        // window after the abort answered, so one drain at once may still find claims dry.
        List<String> processed = ClaimWorker.drainForOneSecond(lcid);

        assertThat(processed).contains(lcid + "/waiting#1");
    }

    @Test
    void given_a_live_holder_when_workers_claim_then_its_lcid_is_never_handed_out() {
        String lcid = unique("order");
        String token = acquire(lcid, fields("requestId", "busy", "leaseMs", 30000)).then().extract().path("token");
        acquire(lcid, "behind").then().statusCode(202);

        List<String> processed = ClaimWorker.drain();

        assertThat(processed).noneMatch(p -> p.startsWith(lcid + "/"));
        assertThat(lock(lcid).getString("activeRequestId")).isEqualTo("busy");
        complete(lcid, token, "busy").then().body("request.requestId", equalTo("behind"));
    }

    @Test
    void given_nothing_orphaned_when_claiming_then_204() {
        ClaimWorker.drain();
        ClaimWorker.claim().then().statusCode(204);
        client().post("/v1/claims").then().statusCode(204); // the body is optional
    }

    @Test
    void given_a_bad_lease_when_claiming_then_400() {
        client().body(fields("leaseMs", 1)).post("/v1/claims").then().statusCode(400)
                .body("field", equalTo("leaseMs"));
    }
}
