package dev.baton.lock;

import static dev.baton.testing.Api.abort;
import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.heartbeat;
import static dev.baton.testing.Api.lock;
import static dev.baton.testing.Api.request;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import org.junit.jupiter.api.Test;

import dev.baton.testing.ClaimWorker;
import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;

/** Default limits: queue bound 1000, payload 64 KiB. */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class LimitsScenariosTest {

    @Test
    void given_a_full_queue_when_one_more_request_arrives_then_429_queue_full_with_retry_after() {
        String lcid = unique("order");
        String token = acquire(lcid, "holder").then().statusCode(200).extract().path("token");
        for (int i = 1; i <= 1000; i++) {
            acquire(lcid, "w" + i).then().statusCode(202);
        }

        acquire(lcid, "one-too-many").then().statusCode(429)
                .contentType("application/problem+json")
                .header("Retry-After", "1")
                .body("code", equalTo("QUEUE_FULL"));

        assertThat(lock(lcid).getInt("queueLength")).isEqualTo(1000);
        request(lcid, "one-too-many").then().statusCode(404);
        // Waiting requests still get their answer from a full queue.
        acquire(lcid, "w1000").then().statusCode(202).body("position", equalTo(1000));
        leaveNothingBehind(lcid);
        abort(lcid, fields("requestId", "holder", "token", token)).then().statusCode(200);
    }

    /**
     * Every queued request withdraws: 1000 requests left in the tests' shared Redis would be
     * claimable work for the claim workers of later test classes once their holder's lease ends.
     */
    private static void leaveNothingBehind(String lcid) {
        for (int i = 1; i <= 1000; i++) {
            abort(lcid, fields("requestId", "w" + i)).then().statusCode(200);
        }
    }

    @Test
    void given_a_full_queue_when_the_holders_request_goes_back_to_the_head_then_the_queue_holds_one_more_and_nothing_is_dropped()
            throws InterruptedException {
        String lcid = unique("order");
        String token = acquire(lcid, fields("requestId", "holder", "leaseMs", 600_000)).then().statusCode(200)
                .extract().path("token");
        for (int i = 1; i <= 1000; i++) {
            acquire(lcid, "w" + i).then().statusCode(202);
        }

        // The holder dies: its lease is cut short, and runs out.
        heartbeat(lcid, fields("token", token, "leaseMs", 500)).then().statusCode(200);
        Thread.sleep(700);
        acquire(lcid, "newcomer").then().statusCode(429).body("code", equalTo("QUEUE_FULL"));

        assertThat(lock(lcid).getBoolean("held")).isFalse();
        assertThat(lock(lcid).getInt("queueLength")).isEqualTo(1001);
        request(lcid, "holder").then().statusCode(200).body("state", equalTo("QUEUED"))
                .body("position", equalTo(1)).body("attempt", equalTo(2));

        // A claim takes it from the head; its holder gives it back with requeue: 1001 again.
        var claimed = ClaimWorker.claimOf(lcid);
        assertThat(claimed.getString("request.requestId")).isEqualTo("holder");
        assertThat(lock(lcid).getInt("queueLength")).isEqualTo(1000);
        abort(lcid, fields("requestId", "holder", "token", claimed.getString("token"), "requeue", true)).then().statusCode(200)
                .body("pending", equalTo(1001));
        request(lcid, "w1000").then().body("position", equalTo(1001));
        leaveNothingBehind(lcid);
        abort(lcid, fields("requestId", "holder")).then().statusCode(200);
    }

    @Test
    void given_a_payload_over_64_kib_when_acquiring_then_413_and_nothing_is_stored() {
        String lcid = unique("order");
        String big = "x".repeat(64 * 1024); // serialized with its quotes: 65538 bytes

        acquire(lcid, fields("requestId", "big", "payload", big)).then().statusCode(413)
                .contentType("application/problem+json")
                .body("code", equalTo("PAYLOAD_TOO_LARGE"))
                .body("field", equalTo("payload"));

        assertThat(lock(lcid).getBoolean("held")).isFalse();
        request(lcid, "big").then().statusCode(404);
    }

    @Test
    void given_a_payload_just_under_the_limit_when_acquiring_then_it_is_accepted() {
        String lcid = unique("order");
        acquire(lcid, fields("requestId", "fits", "payload", "x".repeat(64 * 1024 - 2))).then().statusCode(200);
    }

    @Test
    void given_a_body_over_256_kib_on_any_operation_then_413_problem_as_the_contract_says() {
        String huge = "{\"token\":\"t\",\"requestId\":\"r\",\"reason\":\"" + "h".repeat(300 * 1024) + "\"}";
        for (String operation : java.util.List.of("heartbeat", "abort", "complete", "acquire")) {
            dev.baton.testing.Api.client().body(huge).post("/v1/locks/{lcid}/" + operation, unique("order")).then()
                    .statusCode(413)
                    .contentType("application/problem+json")
                    .body("code", equalTo("PAYLOAD_TOO_LARGE"));
        }
        dev.baton.testing.Api.client().body(huge).post("/v1/claims").then().statusCode(413);
    }

    /**
     * A body without a Content-Length (chunked, as a streaming client sends it) is cut off at the same
     * 256 KiB, with the same problem, and nothing is stored; a small chunked body works as any other.
     */
    @Test
    void given_a_chunked_body_over_256_kib_then_413_problem_and_nothing_stored() throws Exception {
        String lcid = unique("order");
        StringBuilder items = new StringBuilder();
        for (int i = 0; i < 50_000; i++) { // about 400 KB of short strings: no single string is long
            items.append(i == 0 ? "" : ",").append("\"abcdef\"");
        }
        java.net.http.HttpResponse<String> refused = postChunked(lcid,
                "{\"requestId\":\"big\",\"payload\":[" + items + "]}");
        assertThat(refused.statusCode()).isEqualTo(413);
        assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(refused.body()).contains("\"code\":\"PAYLOAD_TOO_LARGE\"");
        request(lcid, "big").then().statusCode(404);

        java.net.http.HttpResponse<String> small = postChunked(lcid, "{\"requestId\":\"small\"}");
        assertThat(small.statusCode()).isEqualTo(200);
        assertThat(small.body()).contains("\"status\":\"ACQUIRED\"");
    }

    private static java.net.http.HttpResponse<String> postChunked(String lcid, String body) throws Exception {
        byte[] bytes = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder()
                .version(java.net.http.HttpClient.Version.HTTP_1_1).build();
        java.net.http.HttpRequest post = java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                io.restassured.RestAssured.baseURI + ":" + io.restassured.RestAssured.port + "/v1/locks/" + lcid + "/acquire"))
                .header("Content-Type", "application/json")
                // Unknown length: the client sends the body chunked.
                .POST(java.net.http.HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(bytes)))
                .build();
        return http.send(post, java.net.http.HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void given_a_result_over_the_limit_when_completing_then_413_and_the_request_stays_active() {
        String lcid = unique("order");
        String token = acquire(lcid, "a").then().extract().path("token");

        complete(lcid, fields("token", token, "requestId", "a", "result", "y".repeat(70_000))).then().statusCode(413)
                .body("field", equalTo("result"));

        request(lcid, "a").then().body("state", equalTo("ACTIVE"));
    }
}
