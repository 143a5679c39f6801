package dev.baton.lock;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import dev.baton.ops.EmbeddedRedis;
import dev.baton.testing.Api;
import dev.baton.testing.Contract;
import dev.baton.testing.LongPoll;
import dev.baton.testing.LongPoll.Pending;
import dev.baton.testing.PackagedService;
import dev.baton.testing.RedisTestResource;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

/**
 * Two replicas of the packaged service on one Redis, as behind a Kubernetes Service: a long-poll
 * held by replica B is woken by a complete handled by replica A. Re-checks are 10 s apart here,
 * so an answer within a second came from the notification published by A's script.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LongPollReplicasIT {

    private static EmbeddedRedis embedded;
    private static Replica a;
    private static Replica b;

    /** One running replica and its API. */
    record Replica(PackagedService service, int port) {

        RequestSpecification client() {
            return given().filter(Contract.FILTER).baseUri("http://127.0.0.1:" + port).contentType(ContentType.JSON)
                    .accept(ContentType.JSON);
        }

        Response acquire(String lcid, Map<String, Object> body) {
            return client().body(body).post("/v1/locks/{lcid}/acquire", lcid);
        }

        Response complete(String lcid, String token, String requestId) {
            return client().body(Api.fields("token", token, "requestId", requestId))
                    .post("/v1/locks/{lcid}/complete", lcid);
        }

        Pending waitForTurn(String lcid, String requestId, long waitMs) {
            return LongPoll.inBackground(() -> acquire(lcid, Api.fields("requestId", requestId, "mode", "wait",
                    "waitMs", waitMs)));
        }

        void untilQueued(String lcid, String requestId) throws InterruptedException {
            for (int i = 0; i < 300; i++) {
                if (client().get("/v1/locks/{lcid}/requests/{requestId}", lcid, requestId).statusCode() == 200) {
                    return;
                }
                Thread.sleep(10);
            }
            throw new AssertionError(requestId + " was never queued");
        }
    }

    @BeforeAll
    static void start() throws Exception {
        embedded = RedisTestResource.externalUrl() == null ? EmbeddedRedis.start() : null;
        String redisUrl = embedded == null ? RedisTestResource.externalUrl() : embedded.url();
        a = replica(redisUrl);
        b = replica(redisUrl);
        a.service().awaitListening();
        b.service().awaitListening();
    }

    private static Replica replica(String redisUrl) throws Exception {
        int port = EmbeddedRedis.freePort();
        return new Replica(PackagedService.launch(Map.of(
                "QUARKUS_REDIS_HOSTS", redisUrl,
                "QUARKUS_HTTP_PORT", Integer.toString(port),
                "QUARKUS_MANAGEMENT_PORT", Integer.toString(EmbeddedRedis.freePort()),
                "BATON_AUTH_ENABLED", "false",
                "BATON_WAIT_RECHECK_MS", "10000",
                "BATON_WAIT_PICKUP_MS", "30000")), port);
    }

    @AfterAll
    static void stop() throws Exception {
        for (Replica replica : new Replica[] { a, b }) {
            if (replica != null) {
                replica.service().process().destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
        if (embedded != null) {
            embedded.stop();
        }
    }

    @Test
    @Order(1)
    void given_a_waiter_long_polling_on_replica_b_when_the_holder_completes_on_replica_a_then_b_answers_acquired_promptly()
            throws Exception {
        List<Long> latencies = new ArrayList<>();
        for (int round = 0; round < 5; round++) {
            String lcid = Api.unique("order");
            String token = a.acquire(lcid, Api.fields("requestId", "pay")).then().statusCode(200).extract()
                    .path("token");
            Pending waiter = b.waitForTurn(lcid, "stock", 20_000);
            b.untilQueued(lcid, "stock");
            Thread.sleep(100);
            assertThat(waiter.answered()).isFalse();

            long completed = System.nanoTime();
            a.complete(lcid, token, "pay").then().statusCode(200).body("passedTo", equalTo("stock"));

            Response turn = waiter.get();
            assertThat(turn.statusCode()).isEqualTo(200);
            assertThat(turn.jsonPath().getString("status")).isEqualTo("ACQUIRED");
            latencies.add(waiter.millisAfter(completed));
            b.complete(lcid, turn.jsonPath().getString("token"), "stock").then().statusCode(200)
                    .body("status", equalTo("RELEASED"));
        }
        System.out.printf("cross-replica wake-up, complete sent on A -> long-poll answered on B: %s ms%n", latencies);
        assertThat(latencies).as("woken by the notification, not the 10 s re-check").allMatch(ms -> ms < 1000);
    }

    @Test
    @Order(2)
    void given_a_submitter_long_polling_its_requests_view_on_b_when_the_holder_on_a_completes_it_then_b_answers_done()
            throws Exception {
        String lcid = Api.unique("order");
        String token = a.acquire(lcid, Api.fields("requestId", "first")).then().statusCode(200).extract()
                .path("token");
        a.acquire(lcid, Api.fields("requestId", "second")).then().statusCode(202);
        Pending view = LongPoll.inBackground(() -> b.client().queryParam("waitMs", 20_000)
                .get("/v1/locks/{lcid}/requests/{requestId}", lcid, "second"));
        Thread.sleep(200);

        a.complete(lcid, token, "first").then().body("status", equalTo("NEXT"));
        long completed = System.nanoTime();
        a.client().body(Api.fields("token", token, "requestId", "second", "result", Api.fields("ok", true)))
                .post("/v1/locks/{lcid}/complete", lcid).then().body("status", equalTo("RELEASED"));

        view.get().then().statusCode(200).body("state", equalTo("DONE")).body("result.ok", equalTo(true));
        assertThat(view.millisAfter(completed)).isLessThan(1000);
    }

    /** Last: it stops replica B. */
    @Test
    @Order(3)
    void given_open_long_polls_on_b_when_b_is_sent_sigterm_then_every_one_is_answered_at_once_without_a_5xx()
            throws Exception {
        String lcid = Api.unique("order");
        a.acquire(lcid, Api.fields("requestId", "holder", "leaseMs", 60_000)).then().statusCode(200);
        List<Pending> waiters = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            waiters.add(b.waitForTurn(lcid, "w" + i, 25_000));
            b.untilQueued(lcid, "w" + i);
        }
        Thread.sleep(200);

        long sigterm = System.nanoTime();
        b.service().process().destroy();

        List<String> answers = new ArrayList<>();
        for (Pending waiter : waiters) {
            Response answer = waiter.get();
            answers.add(answer.statusCode() + " " + answer.jsonPath().getString("status") + " after "
                    + waiter.millisAfter(sigterm) + " ms");
            assertThat(answer.statusCode()).isEqualTo(202);
            assertThat(waiter.millisAfter(sigterm)).as("at once, not after waitMs (25 s)").isLessThan(3000);
        }
        System.out.printf("long-polls open on B at SIGTERM: %s%n", answers);
        assertThat(b.service().process().waitFor(60, TimeUnit.SECONDS)).isTrue();
        // They are still queued, in order, for their submitters to pick up through replica A.
        a.client().get("/v1/locks/{lcid}/requests/{requestId}", lcid, "w4").then().body("position", equalTo(5));
    }
}
