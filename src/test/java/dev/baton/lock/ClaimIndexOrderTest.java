package dev.baton.lock;

import static dev.baton.testing.Api.abort;
import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.util.List;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.baton.redis.IndexKeys;
import dev.baton.redis.IndexStore;
import dev.baton.redis.LockKeys;
import dev.baton.redis.ScriptCall;
import dev.baton.redis.ScriptRunner;
import dev.baton.security.Caller;
import dev.baton.testing.ClaimWorker;
import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.redis.client.Command;

/**
 * Claim-index writes reach Redis in any order: hints are batched, sent over several connections
 * and by several replicas, and claims re-score or drop entries from what they saw a moment ago.
 * Each scenario delivers a write late, after a newer change of the same lcid, as another replica
 * would, and checks that the late write cannot hide waiting work from claims.
 */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class ClaimIndexOrderTest {

    private static final String TENANT = Caller.OPEN.tenant();
    private static final int LONG_LEASE_MS = 600_000;
    /** Well past the 10 ms hint batch: every hint of the calls before it is written. */
    private static final long FLUSHED_MS = 200;

    @Inject
    IndexStore index;

    @Inject
    ScriptRunner redis;

    @BeforeEach
    void noOrphansOfEarlierScenarios() {
        ClaimWorker.drain();
    }

    @Test
    void given_a_holder_that_aborted_with_work_waiting_when_its_grant_hint_arrives_after_the_abort_hint_then_a_claim_still_gets_the_lcid()
            throws InterruptedException {
        String lcid = unique("late-grant-hint");
        String token = acquire(lcid, fields("requestId", "holder", "leaseMs", LONG_LEASE_MS)).then().statusCode(200)
                .extract().path("token");
        long grantVersion = indexVersionOf(lcid);
        long grantHint = System.currentTimeMillis() + LONG_LEASE_MS;
        acquire(lcid, "waiting").then().statusCode(202);
        abort(lcid, fields("requestId", "holder", "token", token)).then().body("pending", equalTo(1));
        Thread.sleep(FLUSHED_MS);

        index.setClaimHints(TENANT, List.of(new IndexStore.ClaimHint(lcid, grantHint, grantVersion))).await().indefinitely();

        assertThat(indexScore(lcid)).isLessThanOrEqualTo(System.currentTimeMillis());
        assertThat(ClaimWorker.drainForOneSecond(lcid)).containsExactly(lcid + "/waiting#1");
    }

    @Test
    void given_a_claim_that_found_the_lcid_busy_when_the_holder_aborts_before_the_rescore_then_the_stale_rescore_is_ignored()
            throws InterruptedException {
        String lcid = unique("stale-rescore");
        String token = acquire(lcid, fields("requestId", "holder", "leaseMs", LONG_LEASE_MS)).then().statusCode(200)
                .extract().path("token");
        acquire(lcid, "waiting").then().statusCode(202);
        ClaimAnswer.Busy seen = (ClaimAnswer.Busy) inspect(lcid);
        abort(lcid, fields("requestId", "holder", "token", token, "requeue", true)).then().body("pending", equalTo(2));
        Thread.sleep(FLUSHED_MS);

        index.setClaimHints(TENANT, List.of(new IndexStore.ClaimHint(lcid, seen.leaseEndsAt(), seen.indexVersion()))).await().indefinitely();

        assertThat(indexScore(lcid)).isLessThanOrEqualTo(System.currentTimeMillis());
        assertThat(ClaimWorker.drainForOneSecond(lcid)).containsExactly(lcid + "/holder#2", lcid + "/waiting#1");
    }

    @Test
    void given_a_claim_that_found_the_lcid_idle_when_a_new_holder_is_granted_before_the_drop_then_the_lcid_stays_indexed_and_is_rescued_when_it_dies()
            throws InterruptedException {
        String lcid = unique("stale-drop");
        String first = acquire(lcid, "first").then().statusCode(200).extract().path("token");
        complete(lcid, first, "first").then().body("status", equalTo("RELEASED"));
        ClaimAnswer.Idle seen = (ClaimAnswer.Idle) inspect(lcid);
        acquire(lcid, fields("requestId", "dies", "leaseMs", 1000)).then().statusCode(200);
        acquire(lcid, "waiting").then().statusCode(202);
        Thread.sleep(FLUSHED_MS);

        index.dropClaim(TENANT, lcid, seen.indexVersion()).await().indefinitely();

        assertThat(indexScore(lcid)).isNotNull();
        Thread.sleep(1000); // the holder's lease runs out; nobody acquires this lcid again
        assertThat(ClaimWorker.drainForOneSecond(lcid)).containsExactly(lcid + "/dies#2", lcid + "/waiting#1");
    }

    @Test
    void given_an_idle_lcid_when_a_claim_drops_it_with_what_it_saw_then_it_leaves_the_index_with_its_version()
            throws InterruptedException {
        String lcid = unique("idle");
        String token = acquire(lcid, "only").then().statusCode(200).extract().path("token");
        complete(lcid, token, "only").then().body("status", equalTo("RELEASED"));
        Thread.sleep(FLUSHED_MS);
        index.setClaimHints(TENANT, List.of(new IndexStore.ClaimHint(lcid, 0, indexVersionOf(lcid)))).await().indefinitely();
        ClaimAnswer.Idle seen = (ClaimAnswer.Idle) inspect(lcid);

        index.dropClaim(TENANT, lcid, seen.indexVersion()).await().indefinitely();

        assertThat(indexScore(lcid)).isNull();
        assertThat(redis.call(Command.HEXISTS, IndexKeys.claimableVersions(TENANT), lcid).await().indefinitely()
                .toInteger()).isZero();
    }

    private ClaimAnswer inspect(String lcid) {
        return ScriptReplies.claim(lcid, redis.run(new ScriptCall.ClaimInspect(), LockKeys.of(TENANT, lcid)).await().indefinitely());
    }

    /** The version of what the lcid shows now: that of the last hint it gave the index. */
    private long indexVersionOf(String lcid) {
        ClaimAnswer seen = inspect(lcid);
        return seen instanceof ClaimAnswer.Busy busy ? busy.indexVersion() : ((ClaimAnswer.Idle) seen).indexVersion();
    }

    private Long indexScore(String lcid) {
        var score = redis.call(Command.ZSCORE, IndexKeys.claimable(TENANT), lcid).await().indefinitely();
        return score == null ? null : (long) Double.parseDouble(score.toString());
    }
}
