package dev.baton.lock;

import static dev.baton.testing.Api.abort;
import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.heartbeat;
import static dev.baton.testing.Api.lock;
import static dev.baton.testing.Api.request;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.baton.testing.ClaimWorker;
import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

/**
 * Batch handoff (protocol v1.1): {@code take} on complete, acquire and claims hands up to that
 * many queued handoff requests at once, under one fence; the batch is finished as a whole.
 * The test profile sets baton.max-attempts=3.
 */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class BatchHandoffScenariosTest {

    private static final int SHORT_LEASE = 500;

    @Test
    void given_a_holder_and_five_queued_when_it_completes_with_take_3_then_three_become_active_under_one_fence() {
        String lcid = unique("order");
        JsonPath granted = acquire(lcid, "r0").then().statusCode(200).extract().jsonPath();
        for (int i = 1; i <= 5; i++) {
            acquire(lcid, fields("requestId", "r" + i, "payload", Map.of("n", i))).then().statusCode(202);
        }

        JsonPath next = complete(lcid, fields("token", granted.getString("token"), "requestId", "r0", "take", 3))
                .then().statusCode(200)
                .body("status", equalTo("NEXT"))
                .body("request.requestId", equalTo("r1"))
                .body("request.payload.n", equalTo(1))
                .extract().jsonPath();

        assertThat(next.getList("requests.requestId")).containsExactly("r1", "r2", "r3");
        assertThat(next.getList("requests.payload.n")).containsExactly(1, 2, 3);
        assertThat(next.getList("requests.attempt")).containsExactly(1, 1, 1);
        assertThat(next.getString("token")).isEqualTo(granted.getString("token"));
        long fence = next.getLong("fence");
        assertThat(fence).isGreaterThan(granted.getLong("fence"));
        for (String id : List.of("r1", "r2", "r3")) {
            request(lcid, id).then().statusCode(200).body("state", equalTo("ACTIVE")).body("fence", equalTo(fence));
        }
        request(lcid, "r4").then().body("state", equalTo("QUEUED")).body("position", equalTo(1));
        JsonPath view = lock(lcid);
        assertThat(view.getString("activeRequestId")).isEqualTo("r1");
        assertThat(view.getList("activeRequestIds")).containsExactly("r1", "r2", "r3");
        assertThat(view.getInt("queueLength")).isEqualTo(2);
    }

    @Test
    void given_seven_queued_when_the_holder_drains_them_in_batches_of_3_then_fifo_across_batches_and_fences_rise() {
        String lcid = unique("order");
        JsonPath r = acquire(lcid, fields("requestId", "r0", "take", 3)).then().statusCode(200).extract().jsonPath();
        for (int i = 1; i <= 7; i++) {
            acquire(lcid, "r" + i).then().statusCode(202);
        }

        List<List<Object>> batches = new ArrayList<>();
        long lastFence = r.getLong("fence");
        List<Object> current = List.of("r0");
        r = complete(lcid, fields("token", r.getString("token"), "requestId", "r0", "take", 3)).then().statusCode(200)
                .extract().jsonPath();
        while (r.getString("status").equals("NEXT")) {
            current = r.getList("requests.requestId");
            batches.add(current);
            assertThat(r.getLong("fence")).isGreaterThan(lastFence);
            lastFence = r.getLong("fence");
            r = complete(lcid, fields("token", r.getString("token"), "take", 3, "completed", completed(current, true)))
                    .then().statusCode(200).extract().jsonPath();
        }

        assertThat(r.getString("status")).isEqualTo("RELEASED");
        assertThat(batches).containsExactly(List.of("r1", "r2", "r3"), List.of("r4", "r5", "r6"), List.of("r7"));
        for (int i = 1; i <= 7; i++) {
            request(lcid, "r" + i).then().body("state", equalTo("DONE")).body("result.done", equalTo("r" + i));
        }
        assertThat(lock(lcid).getBoolean("held")).isFalse();
        assertThat(lock(lcid).getMap("$")).doesNotContainKey("activeRequestIds");
    }

    @Test
    void given_a_wait_request_in_the_queue_when_a_batch_is_taken_then_it_stops_before_it_and_the_wait_request_gets_its_turn() {
        String lcid = unique("order");
        String token = acquire(lcid, "h0").then().statusCode(200).extract().path("token");
        acquire(lcid, "h1").then().statusCode(202);
        acquire(lcid, "h2").then().statusCode(202);
        acquire(lcid, fields("requestId", "w", "mode", "wait")).then().statusCode(202);
        acquire(lcid, "h3").then().statusCode(202);

        JsonPath next = complete(lcid, fields("token", token, "requestId", "h0", "take", 10)).then().statusCode(200)
                .extract().jsonPath();
        assertThat(next.getList("requests.requestId")).containsExactly("h1", "h2");

        complete(lcid, fields("token", token, "take", 10, "completed", completed(List.of("h2", "h1"), false)))
                .then().statusCode(200)
                .body("status", equalTo("RELEASED"))
                .body("passedTo", equalTo("w"))
                .body("pending", equalTo(1));
        acquire(lcid, fields("requestId", "w", "mode", "wait")).then().statusCode(200).body("status", equalTo("ACQUIRED"));
    }

    @Test
    void given_a_batch_when_the_complete_names_other_requests_then_409_batch_mismatch_and_nothing_changes() {
        String lcid = unique("order");
        String token = queueBehindHolder(lcid, 4);
        complete(lcid, fields("token", token, "requestId", "r0", "take", 2)).then().statusCode(200);
        long fence = lock(lcid).getLong("fence");

        for (Map<String, Object> wrong : List.of(
                fields("token", token, "completed", completed(List.of("r1"), false)),
                fields("token", token, "completed", completed(List.of("r1", "r3"), false)),
                fields("token", token, "completed", completed(List.of("r1", "r2", "r3"), false)),
                fields("token", token, "requestId", "r1"))) {
            complete(lcid, wrong).then().statusCode(409)
                    .contentType("application/problem+json")
                    .body("code", equalTo("BATCH_MISMATCH"))
                    .body("activeRequestIds", equalTo(List.of("r1", "r2")));
        }

        JsonPath view = lock(lcid);
        assertThat(view.getBoolean("held")).isTrue();
        assertThat(view.getLong("fence")).isEqualTo(fence);
        assertThat(view.getList("activeRequestIds")).containsExactly("r1", "r2");
        assertThat(view.getInt("queueLength")).isEqualTo(2);
        request(lcid, "r1").then().body("state", equalTo("ACTIVE"));
        request(lcid, "r2").then().body("state", equalTo("ACTIVE"));
        // Another token, whatever it names, is not the holder: LOCK_LOST as in v1.
        complete(lcid, fields("token", "not-the-token", "completed", completed(List.of("r1", "r2"), false)))
                .then().statusCode(409).body("code", equalTo("LOCK_LOST"));
        // The caller still holds the lock and finishes its batch.
        complete(lcid, fields("token", token, "completed", completed(List.of("r1", "r2"), false))).then()
                .statusCode(200).body("status", equalTo("NEXT")).body("request.requestId", equalTo("r3"));
    }

    @Test
    void given_a_batch_complete_that_handed_off_when_it_is_retried_then_the_same_answer_and_nothing_else_is_popped() {
        String lcid = unique("order");
        String token = queueBehindHolder(lcid, 5);
        complete(lcid, fields("token", token, "requestId", "r0", "take", 2)).then().statusCode(200);

        Map<String, Object> first = fields("token", token, "take", 2, "completed", completed(List.of("r1", "r2"), true));
        JsonPath next = complete(lcid, first).then().statusCode(200).extract().jsonPath();
        Map<String, Object> reordered = fields("token", token, "take", 2, "completed",
                completed(List.of("r2", "r1"), true));
        JsonPath again = complete(lcid, reordered).then().statusCode(200).extract().jsonPath();

        assertThat(next.getList("requests.requestId")).containsExactly("r3", "r4");
        assertThat(again.getList("requests.requestId")).containsExactly("r3", "r4");
        assertThat(again.getLong("fence")).isEqualTo(next.getLong("fence"));
        assertThat(lock(lcid).getInt("queueLength")).isEqualTo(1);
        request(lcid, "r1").then().body("state", equalTo("DONE")).body("result.done", equalTo("r1"));

        complete(lcid, fields("token", token, "take", 2, "completed", completed(List.of("r3", "r4"), true)))
                .then().statusCode(200).body("request.requestId", equalTo("r5"));
        Map<String, Object> last = fields("token", token, "take", 2, "completed", completed(List.of("r5"), true));
        complete(lcid, last).then().statusCode(200).body("status", equalTo("RELEASED")).body("pending", equalTo(0));
        complete(lcid, last).then().statusCode(200).body("status", equalTo("RELEASED")).body("pending", equalTo(0));
        // A retry of the first complete once the lock moved on: the batch it handed out is gone.
        complete(lcid, first).then().statusCode(409).body("code", equalTo("LOCK_LOST"));
    }

    @Test
    void given_a_batch_when_the_holder_aborts_with_requeue_then_the_whole_batch_is_back_at_the_head_in_order() {
        String lcid = unique("order");
        String token = queueBehindHolder(lcid, 4);
        complete(lcid, fields("token", token, "requestId", "r0", "take", 3)).then().statusCode(200);

        abort(lcid, fields("token", token, "requestId", "r2", "requeue", true, "reason", "db down")).then()
                .statusCode(200).body("status", equalTo("RELEASED")).body("pending", equalTo(4));
        abort(lcid, fields("token", token, "requestId", "r3", "requeue", true)).then()
                .statusCode(200).body("pending", equalTo(4));

        for (int i = 1; i <= 3; i++) {
            request(lcid, "r" + i).then().body("state", equalTo("QUEUED")).body("position", equalTo(i))
                    .body("attempt", equalTo(2)).body("reason", equalTo("db down"));
        }
        request(lcid, "r4").then().body("position", equalTo(4)).body("attempt", equalTo(1));

        // A newcomer's acquire rescues the queue (v1), here with take: the oldest first, in order.
        JsonPath rescue = acquire(lcid, fields("requestId", "x", "take", 10)).then().statusCode(200)
                .body("status", equalTo("NEXT")).extract().jsonPath();
        assertThat(rescue.getList("requests.requestId")).containsExactly("r1", "r2", "r3", "r4", "x");
        assertThat(rescue.getList("requests.attempt")).containsExactly(2, 2, 2, 1, 1);
    }

    @Test
    void given_a_rescue_that_handed_out_a_batch_when_the_acquire_is_retried_then_the_same_batch_comes_back() {
        String lcid = unique("order");
        String token = queueBehindHolder(lcid, 3);
        abort(lcid, fields("token", token, "requestId", "r0")).then().statusCode(200);

        Map<String, Object> rescue = fields("requestId", "x", "take", 3);
        JsonPath first = acquire(lcid, rescue).then().statusCode(200).extract().jsonPath();
        JsonPath again = acquire(lcid, rescue).then().statusCode(200).extract().jsonPath();

        assertThat(first.getList("requests.requestId")).containsExactly("r1", "r2", "r3");
        assertThat(again.getList("requests.requestId")).containsExactly("r1", "r2", "r3");
        assertThat(again.getString("token")).isEqualTo(first.getString("token"));
        assertThat(again.getLong("fence")).isEqualTo(first.getLong("fence"));
        request(lcid, "x").then().body("state", equalTo("QUEUED")).body("position", equalTo(1));
        // The batch's lease is renewed as one.
        heartbeat(lcid, fields("token", first.getString("token"), "leaseMs", 60000)).then().statusCode(200)
                .body("leaseMs", equalTo(60000));
        assertThat(lock(lcid).getLong("leaseRemainingMs")).isGreaterThan(50000);
    }

    @Test
    void given_a_wait_holder_when_it_completes_with_take_3_then_it_is_handed_the_handoff_requests_as_a_batch() {
        String lcid = unique("order");
        String token = acquire(lcid, fields("requestId", "w", "mode", "wait")).then().statusCode(200)
                .extract().path("token");
        for (int i = 1; i <= 4; i++) {
            acquire(lcid, "h" + i).then().statusCode(202);
        }

        JsonPath next = complete(lcid, fields("token", token, "requestId", "w", "take", 3)).then().statusCode(200)
                .body("status", equalTo("NEXT")).extract().jsonPath();

        assertThat(next.getList("requests.requestId")).containsExactly("h1", "h2", "h3");
        request(lcid, "w").then().body("state", equalTo("DONE"));
    }

    @Test
    void given_a_batch_when_the_holder_aborts_without_requeue_then_every_request_of_it_is_aborted() {
        String lcid = unique("order");
        String token = queueBehindHolder(lcid, 3);
        complete(lcid, fields("token", token, "requestId", "r0", "take", 2)).then().statusCode(200);

        abort(lcid, fields("token", token, "requestId", "r1", "reason", "bad input")).then().statusCode(200)
                .body("status", equalTo("RELEASED")).body("pending", equalTo(1));

        request(lcid, "r1").then().body("state", equalTo("ABORTED")).body("reason", equalTo("bad input"));
        request(lcid, "r2").then().body("state", equalTo("ABORTED")).body("reason", equalTo("bad input"));
        request(lcid, "r3").then().body("state", equalTo("QUEUED")).body("position", equalTo(1));
        complete(lcid, fields("token", token, "completed", completed(List.of("r1", "r2"), false))).then()
                .statusCode(409).body("code", equalTo("LOCK_LOST"));
    }

    @Test
    void given_a_batch_whose_lease_ran_out_when_the_next_grant_comes_then_it_is_back_at_the_head_in_order_with_attempt_2()
            throws InterruptedException {
        String lcid = unique("order");
        String token = acquire(lcid, fields("requestId", "r0", "leaseMs", SHORT_LEASE)).then().statusCode(200)
                .extract().path("token");
        for (int i = 1; i <= 4; i++) {
            acquire(lcid, "r" + i).then().statusCode(202);
        }
        JsonPath batch = complete(lcid, fields("token", token, "requestId", "r0", "take", 3)).then().statusCode(200)
                .extract().jsonPath();
        assertThat(batch.getList("requests.requestId")).containsExactly("r1", "r2", "r3");
        assertThat(batch.getLong("leaseMs")).isEqualTo(SHORT_LEASE);

        Thread.sleep(SHORT_LEASE + 300);

        JsonPath rescue = acquire(lcid, fields("requestId", "late", "take", 2)).then().statusCode(200)
                .body("status", equalTo("NEXT")).extract().jsonPath();
        assertThat(rescue.getList("requests.requestId")).containsExactly("r1", "r2");
        assertThat(rescue.getList("requests.attempt")).containsExactly(2, 2);
        assertThat(rescue.getLong("fence")).isGreaterThan(batch.getLong("fence"));
        request(lcid, "r3").then().body("state", equalTo("QUEUED")).body("position", equalTo(1))
                .body("attempt", equalTo(2)).body("reason", equalTo("lease expired"));
        request(lcid, "r4").then().body("position", equalTo(2)).body("attempt", equalTo(1));
        complete(lcid, fields("token", token, "completed", completed(List.of("r1", "r2", "r3"), false))).then()
                .statusCode(409).body("code", equalTo("LOCK_LOST"));
    }

    @Test
    void given_a_batch_requeued_past_max_attempts_then_all_of_it_is_dead_and_listed_in_the_dead_letters()
            throws InterruptedException {
        String lcid = unique("order");
        String token = queueBehindHolder(lcid, 2);
        complete(lcid, fields("token", token, "requestId", "r0", "take", 2)).then().statusCode(200);
        for (int attempt = 1; attempt <= 3; attempt++) {
            abort(lcid, fields("token", token, "requestId", "r1", "requeue", true, "reason", "poison")).then()
                    .statusCode(200);
            if (attempt < 3) {
                JsonPath again = acquire(lcid, fields("requestId", "rescuer-" + attempt, "take", 2)).then()
                        .statusCode(200).extract().jsonPath();
                assertThat(again.getList("requests.requestId")).containsExactly("r1", "r2");
                token = again.getString("token");
            }
        }

        request(lcid, "r1").then().body("state", equalTo("DEAD")).body("attempt", equalTo(3));
        request(lcid, "r2").then().body("state", equalTo("DEAD")).body("attempt", equalTo(3));
        // The dead-letter index (another slot) is written just after the script's answer.
        List<String> dead = List.of();
        for (int look = 0; look < 30 && dead.size() < 2; look++) {
            if (look > 0) {
                Thread.sleep(100);
            }
            dead = client().queryParam("limit", 1000).get("/v1/dead-letters").then().statusCode(200)
                    .extract().jsonPath().getList("items.findAll { it.lcid == '" + lcid + "' }.requestId");
        }
        assertThat(dead).containsExactlyInAnyOrder("r1", "r2");
    }

    @Test
    void given_a_holder_that_aborted_when_a_worker_claims_with_take_then_it_is_handed_the_queue_as_one_batch() {
        String lcid = unique("order");
        String token = queueBehindHolder(lcid, 3);
        abort(lcid, fields("token", token, "requestId", "r0")).then().statusCode(200).body("pending", equalTo(3));

        JsonPath claimed = ClaimWorker.claimOf(lcid, 5);

        assertThat(claimed.getString("status")).isEqualTo("NEXT");
        assertThat(claimed.getList("requests.requestId")).containsExactly("r1", "r2", "r3");
        complete(lcid, fields("token", claimed.getString("token"), "completed",
                completed(List.of("r3", "r1", "r2"), false))).then().statusCode(200).body("status", equalTo("RELEASED"));
    }

    @Test
    void given_a_v1_holder_without_take_then_next_carries_one_request_in_requests_too() {
        String lcid = unique("order");
        String token = queueBehindHolder(lcid, 2);
        // An empty completed next to requestId (as some generated clients send it) is a v1 complete.
        JsonPath next = complete(lcid, fields("token", token, "requestId", "r0", "completed", List.of())).then()
                .statusCode(200).extract().jsonPath();

        assertThat(next.getList("requests.requestId")).containsExactly("r1");
        assertThat(next.getString("request.requestId")).isEqualTo("r1");
        assertThat(lock(lcid).getList("activeRequestIds")).containsExactly("r1");
        complete(lcid, fields("token", token, "completed", completed(List.of("r1"), false))).then().statusCode(200)
                .body("request.requestId", equalTo("r2"));
    }

    @Test
    void given_bad_take_or_completed_then_400_naming_the_field_and_nothing_changes() {
        String lcid = unique("order");
        String token = queueBehindHolder(lcid, 3);

        for (Object take : List.of(0, 101, -1, 1.5, "two", true)) {
            complete(lcid, fields("token", token, "requestId", "r0", "take", take)).then().statusCode(400)
                    .contentType("application/problem+json").body("field", equalTo("take"));
            acquire(lcid, fields("requestId", "r9", "take", take)).then().statusCode(400).body("field", equalTo("take"));
            client().body(fields("take", take)).post("/v1/claims").then().statusCode(400).body("field", equalTo("take"));
        }
        complete(lcid, fields("token", token, "requestId", "r0", "completed", completed(List.of("r0"), false)))
                .then().statusCode(400).body("field", equalTo("completed"));
        complete(lcid, fields("token", token, "completed", List.of())).then().statusCode(400)
                .body("field", equalTo("completed"));
        complete(lcid, fields("token", token, "completed", completed(List.of("r0", "r0"), false))).then()
                .statusCode(400).body("field", equalTo("completed[1].requestId"));
        complete(lcid, fields("token", token, "completed", List.of(Map.of("requestId", "bad id")))).then()
                .statusCode(400).body("field", equalTo("completed[0].requestId"));
        complete(lcid, fields("token", token)).then().statusCode(400).body("field", equalTo("requestId"));

        request(lcid, "r0").then().body("state", equalTo("ACTIVE"));
        request(lcid, "r9").then().statusCode(404);
        assertThat(lock(lcid).getInt("queueLength")).isEqualTo(3);
        complete(lcid, token, "r0").then().statusCode(200).body("request.requestId", equalTo("r1"));
    }

    /** r0 holds the lock (its token is answered), r1..rN wait behind it. */
    private static String queueBehindHolder(String lcid, int queued) {
        String token = acquire(lcid, "r0").then().statusCode(200).extract().path("token");
        for (int i = 1; i <= queued; i++) {
            acquire(lcid, "r" + i).then().statusCode(202);
        }
        return token;
    }

    private static List<Map<String, Object>> completed(List<?> requestIds, boolean withResults) {
        List<Map<String, Object>> list = new ArrayList<>();
        for (Object id : requestIds) {
            list.add(withResults ? fields("requestId", id, "result", Map.of("done", id)) : fields("requestId", id));
        }
        return list;
    }
}
