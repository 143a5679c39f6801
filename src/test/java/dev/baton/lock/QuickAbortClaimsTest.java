package dev.baton.lock;

import static dev.baton.testing.Api.abort;
import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.lock;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.baton.testing.LongHintBatchProfile;
import dev.baton.testing.ClaimWorker;
import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * A holder that gives up right after its grant (a worker that checks its input and aborts at
 * once) leaves its lcid claimable at once: the claim index must not keep the grant's "look again
 * when the lease ends" over the abort's "look now". The hint batch window is stretched to
 * {@value LongHintBatchProfile#BATCH_MS} ms here, so the grant and the abort of each scenario
 * surely land in one batch, as two calls a few milliseconds apart do in production.
 */
@QuarkusTest
@TestProfile(LongHintBatchProfile.class)
@WithTestResource(RedisTestResource.class)
class QuickAbortClaimsTest {

    /** Far longer than the test: a claim that finds the lcid only after the lease would fail. */
    private static final int LONG_LEASE_MS = 600_000;
    private static final long FLUSHED_MS = 3L * LongHintBatchProfile.BATCH_MS;

    @BeforeEach
    void warmAndNoOrphansOfEarlierScenarios() throws InterruptedException {
        // The first calls of a fresh service take longer than a batch window.
        String warmUp = unique("warm-up");
        for (int i = 0; i < 20; i++) {
            String token = acquire(warmUp, "w" + i).then().statusCode(200).extract().path("token");
            complete(warmUp, token, "w" + i).then().statusCode(200);
        }
        Thread.sleep(FLUSHED_MS);
        ClaimWorker.drain();
    }

    @Test
    void given_waiting_requests_when_the_holder_aborts_right_after_its_grant_then_a_claim_gets_the_lcid_within_a_second()
            throws InterruptedException {
        String lcid = withWaitingRequests(2);

        String token = acquire(lcid, fields("requestId", "newcomer", "leaseMs", LONG_LEASE_MS)).then().statusCode(200)
                .body("request.requestId", equalTo("waiting-1")).extract().path("token");
        abort(lcid, fields("requestId", "waiting-1", "token", token)).then().statusCode(200).body("pending", equalTo(2));

        assertThat(ClaimWorker.drainForOneSecond(lcid)).containsExactly(lcid + "/waiting-2#1", lcid + "/newcomer#1");
    }

    @Test
    void given_waiting_requests_when_the_holder_aborts_with_requeue_right_after_its_grant_then_a_claim_gets_the_lcid_within_a_second()
            throws InterruptedException {
        String lcid = withWaitingRequests(2);

        String token = acquire(lcid, fields("requestId", "newcomer", "leaseMs", LONG_LEASE_MS)).then().statusCode(200)
                .extract().path("token");
        abort(lcid, fields("requestId", "waiting-1", "token", token, "requeue", true)).then().statusCode(200)
                .body("pending", equalTo(3));

        assertThat(ClaimWorker.drainForOneSecond(lcid)).containsExactly(lcid + "/waiting-1#3", lcid + "/waiting-2#1",
                lcid + "/newcomer#1");
    }

    @Test
    void given_a_new_holder_when_it_aborts_right_after_a_request_queued_behind_it_then_a_claim_gets_the_lcid_within_a_second()
            throws InterruptedException {
        String lcid = unique("quick-abort");

        String token = acquire(lcid, fields("requestId", "first", "leaseMs", LONG_LEASE_MS)).then().statusCode(200)
                .extract().path("token");
        acquire(lcid, "second").then().statusCode(202);
        abort(lcid, fields("requestId", "first", "token", token)).then().statusCode(200).body("pending", equalTo(1));

        assertThat(ClaimWorker.drainForOneSecond(lcid)).containsExactly(lcid + "/second#1");
    }

    @Test
    void given_two_lcids_when_one_is_granted_and_the_other_aborted_in_the_same_batch_window_then_a_claim_gets_only_the_aborted_one()
            throws InterruptedException {
        String first = withWaitingRequests(1);
        String second = unique("quick-abort");
        String secondToken = acquire(second, fields("requestId", "long-job", "leaseMs", LONG_LEASE_MS)).then()
                .statusCode(200).extract().path("token");
        acquire(second, "behind-long-job").then().statusCode(202);
        Thread.sleep(FLUSHED_MS);

        // One window: the first lcid is granted and aborted, a third one is granted and kept.
        String token = acquire(first, fields("requestId", "gives-up", "leaseMs", LONG_LEASE_MS)).then().statusCode(200)
                .extract().path("token");
        String third = unique("quick-grant");
        acquire(third, fields("requestId", "keeps-it", "leaseMs", LONG_LEASE_MS)).then().statusCode(200);
        abort(first, fields("requestId", "waiting-1", "token", token)).then().statusCode(200);

        assertThat(ClaimWorker.drainForOneSecond(first, second, third)).containsExactly(first + "/gives-up#1");
        assertThat(lock(second).getString("activeRequestId")).isEqualTo("long-job");
        assertThat(lock(third).getString("activeRequestId")).isEqualTo("keeps-it");

        // Another window, the other way round: a grant on one lcid, then an abort on another.
        String fourth = withWaitingRequests(1);
        acquire(fourth, fields("requestId", "keeps-the-queue", "leaseMs", LONG_LEASE_MS)).then().statusCode(200)
                .body("status", equalTo("NEXT"));
        abort(second, fields("requestId", "long-job", "token", secondToken)).then().statusCode(200);

        assertThat(ClaimWorker.drainForOneSecond(first, second, third, fourth)).containsExactly(second + "/behind-long-job#1");
        assertThat(lock(fourth).getString("activeRequestId")).isEqualTo("waiting-1");
    }

    /**
     * A new lcid whose first holder gave its request back (abort with requeue): its queue waits
     * (waiting-1 first, attempt 2), nobody holds it, and the next acquire is handed waiting-1 (NEXT).
     */
    private static String withWaitingRequests(int waiting) throws InterruptedException {
        String lcid = unique("quick-abort");
        String token = acquire(lcid, fields("requestId", "waiting-1", "leaseMs", LONG_LEASE_MS)).then().statusCode(200)
                .extract().path("token");
        for (int i = 2; i <= waiting; i++) {
            acquire(lcid, "waiting-" + i).then().statusCode(202);
        }
        abort(lcid, fields("requestId", "waiting-1", "token", token, "requeue", true)).then().statusCode(200);
        Thread.sleep(FLUSHED_MS); // these hints are written before the scenario's own calls
        return lcid;
    }
}
