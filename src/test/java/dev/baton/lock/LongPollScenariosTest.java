package dev.baton.lock;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.request;
import static dev.baton.testing.Api.unique;
import static dev.baton.testing.LongPoll.untilQueued;
import static dev.baton.testing.LongPoll.waitForEnd;
import static dev.baton.testing.LongPoll.waitForTurn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

import java.net.URL;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.baton.testing.ClaimWorker;
import dev.baton.testing.LongPoll.Pending;
import dev.baton.testing.Metrics;
import dev.baton.testing.RedisTestResource;
import dev.baton.testing.SlowRecheckProfile;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;

/**
 * Protocol v1.1 long-poll: a {@code wait} acquire with {@code waitMs} is held until its turn,
 * and a request view with {@code waitMs} until the request ended. Re-checks are 10 s apart in
 * this profile, so the prompt answers here come from the scripts' notifications; lost ones are
 * LongPollRecoveryTest's.
 */
@QuarkusTest
@TestProfile(SlowRecheckProfile.class)
@WithTestResource(RedisTestResource.class)
class LongPollScenariosTest {

    @TestHTTPResource(value = "/metrics", management = true)
    URL metricsUrl;


    @Test
    void given_handoff_wait_handoff_queued_when_the_holder_completes_then_the_waiters_long_poll_returns_acquired()
            throws Exception {
        Metrics before = Metrics.scrape(metricsUrl.toString());
        String lcid = unique("order");
        String token = acquire(lcid, "h1").then().statusCode(200).extract().path("token");
        acquire(lcid, "h2").then().statusCode(202);
        Pending waiter = waitForTurn(lcid, "w", 20_000);
        untilQueued(lcid, "w");
        acquire(lcid, "h3").then().statusCode(202);

        complete(lcid, token, "h1").then().body("status", equalTo("NEXT")).body("request.requestId", equalTo("h2"));
        Thread.sleep(200);
        assertThat(waiter.answered()).as("h2 is still being worked on").isFalse();
        long passed = System.nanoTime();
        complete(lcid, token, "h2").then().body("status", equalTo("RELEASED")).body("pending", equalTo(1))
                .body("passedTo", equalTo("w"));

        Response turn = waiter.get();
        assertThat(turn.statusCode()).isEqualTo(200);
        assertThat(turn.jsonPath().getString("status")).isEqualTo("ACQUIRED");
        assertThat(turn.jsonPath().getString("requestId")).isEqualTo("w");
        assertThat(waiter.millisAfter(passed)).as("woken by the notification, not by a re-check").isLessThan(1000);
        assertThat(Metrics.scrape(metricsUrl.toString()).delta(before, "baton_longpoll_wakeup_seconds_count"))
                .isGreaterThanOrEqualTo(1);

        complete(lcid, turn.jsonPath().getString("token"), "w").then().body("status", equalTo("RELEASED"))
                .body("pending", equalTo(1)).body("passedTo", nullValue());
        assertThat(ClaimWorker.claimOf(lcid).getString("request.requestId")).isEqualTo("h3");
    }

    @Test
    void given_a_long_polling_waiter_with_handoff_work_behind_it_when_it_completes_with_take_then_it_gets_that_work()
            throws Exception {
        String lcid = unique("order");
        String token = acquire(lcid, "h1").then().statusCode(200).extract().path("token");
        Pending waiter = waitForTurn(lcid, "w", 20_000);
        untilQueued(lcid, "w");
        acquire(lcid, "h2").then().statusCode(202);

        complete(lcid, token, "h1").then().body("passedTo", equalTo("w"));
        String turn = waiter.get().then().statusCode(200).body("status", equalTo("ACQUIRED")).extract().path("token");

        complete(lcid, fields("token", turn, "requestId", "w", "take", 1)).then().statusCode(200)
                .body("status", equalTo("NEXT")).body("request.requestId", equalTo("h2"));
    }

    @Test
    void given_a_waiter_and_no_change_when_wait_ms_passes_then_it_is_answered_queued_with_its_position() throws Exception {
        String lcid = unique("order");
        acquire(lcid, "h1").then().statusCode(200);
        acquire(lcid, "h2").then().statusCode(202);
        long start = System.nanoTime();
        Response answer = waitForTurn(lcid, "w", 1200).get();

        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(answer.statusCode()).isEqualTo(202);
        assertThat(answer.jsonPath().getString("status")).isEqualTo("QUEUED");
        assertThat(answer.jsonPath().getInt("position")).isEqualTo(2);
        assertThat(took).isBetween(1150L, 5000L);
    }

    @Test
    void given_a_handoff_request_with_wait_ms_then_it_is_answered_queued_at_once() {
        String lcid = unique("order");
        acquire(lcid, "h1").then().statusCode(200);
        long start = System.nanoTime();
        acquire(lcid, fields("requestId", "h2", "waitMs", 10_000)).then().statusCode(202)
                .body("position", equalTo(1));
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2000);
    }

    @Test
    void given_a_queued_request_when_its_view_long_polls_then_it_returns_done_with_the_result_as_soon_as_it_is_completed()
            throws Exception {
        String lcid = unique("order");
        String token = acquire(lcid, "h1").then().statusCode(200).extract().path("token");
        acquire(lcid, fields("requestId", "h2", "payload", fields("sku", "A-1"))).then().statusCode(202);
        Pending view = waitForEnd(lcid, "h2", 20_000);
        Thread.sleep(200);
        assertThat(view.answered()).isFalse();

        complete(lcid, token, "h1").then().body("status", equalTo("NEXT"));
        Thread.sleep(200);
        assertThat(view.answered()).as("h2 is active, not ended").isFalse();
        long done = System.nanoTime();
        complete(lcid, fields("token", token, "requestId", "h2", "result", fields("reserved", true))).then()
                .body("status", equalTo("RELEASED"));

        view.get().then().statusCode(200).body("state", equalTo("DONE")).body("result.reserved", equalTo(true));
        assertThat(view.millisAfter(done)).as("woken by the notification, not by a re-check").isLessThan(1000);
    }

    @Test
    void given_a_queued_request_when_its_view_long_polls_and_nothing_happens_then_the_current_view_after_wait_ms()
            throws Exception {
        String lcid = unique("order");
        acquire(lcid, "h1").then().statusCode(200);
        acquire(lcid, "h2").then().statusCode(202);
        long start = System.nanoTime();

        waitForEnd(lcid, "h2", 800).get().then().statusCode(200).body("state", equalTo("QUEUED"))
                .body("position", equalTo(1));
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(750L, 5000L);
        client().queryParam("waitMs", 5000).get("/v1/locks/{lcid}/requests/{requestId}", lcid, "nobody").then()
                .statusCode(404);
    }

    @Test
    void given_bad_wait_ms_then_400_naming_the_field_and_nothing_is_stored() {
        String lcid = unique("order");
        for (Object bad : new Object[] { -1, 30_001, 1.5, "soon", true }) {
            acquire(lcid, fields("requestId", "r", "mode", "wait", "waitMs", bad)).then().statusCode(400)
                    .body("code", equalTo("INVALID_REQUEST")).body("field", equalTo("waitMs"));
        }
        request(lcid, "r").then().statusCode(404);
        acquire(lcid, "r").then().statusCode(200);
        for (String bad : new String[] { "-1", "30001", "1.5", "soon" }) {
            client().queryParam("waitMs", bad).get("/v1/locks/{lcid}/requests/{requestId}", lcid, "r").then()
                    .statusCode(400).body("field", equalTo("waitMs"));
        }
    }
}
