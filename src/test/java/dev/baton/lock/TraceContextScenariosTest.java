package dev.baton.lock;

import static dev.baton.testing.Api.abort;
import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.request;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.baton.testing.ClaimWorker;
import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;

/**
 * The trace context of the call that submitted a request travels with the request: whoever is
 * handed it (by NEXT, in a batch, as a wait-mode turn, by a claim, after a redrive) gets the submitter's
 * traceparent and tracestate, so that its work span can link to the submitter's span. Tracing in
 * the service itself is off here: this is the protocol, not the service's own spans.
 */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class TraceContextScenariosTest {

    private static final String STATE = "vendor=opaque-value";

    /** A distinct, valid traceparent per submitter. */
    private static String traceparent(int n) {
        return String.format("00-%032x-%016x-01", 0xabc0000L + n, 0xdef00L + n);
    }

    private static Response submit(String lcid, String requestId, int n, Map<String, Object> more) {
        Map<String, Object> body = fields("requestId", requestId);
        body.putAll(more);
        return client().header("traceparent", traceparent(n)).header("tracestate", STATE).body(body)
                .post("/v1/locks/{lcid}/acquire", lcid);
    }

    @Test
    void given_a_request_submitted_with_a_traceparent_when_the_holder_completes_then_NEXT_carries_it() {
        String lcid = unique("trace");
        String token = submit(lcid, "r0", 0, Map.of()).then().statusCode(200)
                .body("traceparent", equalTo(traceparent(0))).extract().path("token");
        submit(lcid, "r1", 1, Map.of()).then().statusCode(202);

        complete(lcid, token, "r0").then().statusCode(200)
                .body("status", equalTo("NEXT"))
                .body("request.requestId", equalTo("r1"))
                .body("request.traceparent", equalTo(traceparent(1)))
                .body("request.tracestate", equalTo(STATE))
                .body("requests[0].traceparent", equalTo(traceparent(1)));
        request(lcid, "r1").then().statusCode(200).body("traceparent", equalTo(traceparent(1)))
                .body("tracestate", equalTo(STATE));
    }

    @Test
    void given_three_requests_from_three_submitters_when_the_holder_takes_a_batch_then_each_entry_has_its_own() {
        String lcid = unique("trace");
        String token = acquire(lcid, "r0").then().statusCode(200).extract().path("token");
        for (int i = 1; i <= 3; i++) {
            submit(lcid, "r" + i, i, Map.of()).then().statusCode(202);
        }

        JsonPath next = complete(lcid, fields("token", token, "requestId", "r0", "take", 3)).then().statusCode(200)
                .extract().jsonPath();

        assertThat(next.getList("requests.requestId")).containsExactly("r1", "r2", "r3");
        assertThat(next.getList("requests.traceparent")).containsExactly(traceparent(1), traceparent(2),
                traceparent(3));
    }

    @Test
    void given_a_wait_request_with_a_traceparent_when_its_turn_is_picked_up_then_ACQUIRED_carries_it() {
        String lcid = unique("trace");
        String token = acquire(lcid, "r0").then().statusCode(200).extract().path("token");
        submit(lcid, "w", 7, Map.of("mode", "wait")).then().statusCode(202);
        complete(lcid, token, "r0").then().statusCode(200).body("status", equalTo("RELEASED"))
                .body("passedTo", equalTo("w"));

        // The submitter's repeat picks its turn up; the repeat sends no header and changes nothing stored.
        acquire(lcid, fields("requestId", "w", "mode", "wait")).then().statusCode(200)
                .body("status", equalTo("ACQUIRED"))
                .body("requestId", equalTo("w"))
                .body("traceparent", equalTo(traceparent(7)))
                .body("tracestate", equalTo(STATE));
    }

    @Test
    void given_requests_left_by_a_holder_that_aborted_when_a_worker_claims_them_then_the_claim_carries_them() {
        String lcid = unique("trace");
        String token = acquire(lcid, "r0").then().statusCode(200).extract().path("token");
        submit(lcid, "r1", 1, Map.of()).then().statusCode(202);
        submit(lcid, "r2", 2, Map.of()).then().statusCode(202);
        abort(lcid, fields("token", token, "requestId", "r0")).then().statusCode(200);

        JsonPath claimed = ClaimWorker.claimOf(lcid, 2);

        assertThat(claimed.getList("requests.requestId")).containsExactly("r1", "r2");
        assertThat(claimed.getList("requests.traceparent")).containsExactly(traceparent(1), traceparent(2));
    }

    @Test
    void given_a_dead_request_submitted_with_a_traceparent_when_it_is_redriven_then_the_next_holder_gets_it() {
        String lcid = unique("trace");
        String token = submit(lcid, "poison", 5, Map.of()).then().statusCode(200).extract().path("token");
        // The test profile allows 3 attempts: each abort with requeue hands it to the next rescuer.
        for (int attempt = 1; attempt <= 3; attempt++) {
            abort(lcid, fields("requestId", "poison", "token", token, "requeue", true)).then().statusCode(200);
            if (attempt < 3) {
                token = acquire(lcid, "rescuer-" + attempt).then().statusCode(200)
                        .body("request.requestId", equalTo("poison"))
                        .body("request.traceparent", equalTo(traceparent(5))).extract().path("token");
            }
        }
        request(lcid, "poison").then().body("state", equalTo("DEAD"));
        // Drain the rescuers' own requests, then redrive the dead one.
        String drain = acquire(lcid, "drain").then().statusCode(200).extract().path("token");
        String current = "rescuer-1";
        while (current != null) {
            current = complete(lcid, drain, current).then().statusCode(200).extract().path("request.requestId");
        }
        client().post("/v1/locks/{lcid}/requests/{requestId}/retry", lcid, "poison").then().statusCode(202);

        acquire(lcid, "after").then().statusCode(200)
                .body("status", equalTo("NEXT"))
                .body("request.requestId", equalTo("poison"))
                .body("request.traceparent", equalTo(traceparent(5)))
                .body("request.tracestate", equalTo(STATE));
    }

    @Test
    void given_a_repeat_with_another_traceparent_then_the_first_one_stays() {
        String lcid = unique("trace");
        acquire(lcid, "r0").then().statusCode(200);
        submit(lcid, "r1", 1, Map.of()).then().statusCode(202);
        submit(lcid, "r1", 2, Map.of()).then().statusCode(202);

        request(lcid, "r1").then().statusCode(200).body("traceparent", equalTo(traceparent(1)));
    }

    @Test
    void given_no_or_an_invalid_traceparent_then_the_call_works_and_nothing_is_stored() {
        String lcid = unique("trace");
        String token = acquire(lcid, "r0").then().statusCode(200).body("traceparent", nullValue())
                .extract().path("token");
        for (String invalid : List.of("not-a-traceparent", "00-00000000000000000000000000000000-0000000000000001-01",
                "ff-0000000000000000000000000000abc1-0000000000000001-01",
                "00-0000000000000000000000000000ABC1-0000000000000001-01",
                "00-0000000000000000000000000000abc1-0000000000000001-01-extra")) {
            String id = "bad-" + Math.abs(invalid.hashCode());
            client().header("traceparent", invalid).header("tracestate", STATE).body(fields("requestId", id))
                    .post("/v1/locks/{lcid}/acquire", lcid).then().statusCode(202);
            request(lcid, id).then().statusCode(200).body("traceparent", nullValue()).body("tracestate", nullValue());
        }
        acquire(lcid, "plain").then().statusCode(202);

        JsonPath next = complete(lcid, fields("token", token, "requestId", "r0", "take", 10)).then().statusCode(200)
                .extract().jsonPath();
        assertThat(next.getList("requests.traceparent")).containsOnlyNulls();
    }
}
