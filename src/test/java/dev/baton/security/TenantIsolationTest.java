package dev.baton.security;

import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.baton.testing.AuthEnabledProfile;
import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

/** Two tenants using the same lcid and requestId never see or touch each other's state. */
@QuarkusTest
@TestProfile(AuthEnabledProfile.class)
@WithTestResource(RedisTestResource.class)
class TenantIsolationTest {

    private static RequestSpecification teamA() {
        return client().auth().oauth2(AuthEnabledProfile.KEY_A);
    }

    private static RequestSpecification teamB() {
        return client().auth().oauth2(AuthEnabledProfile.KEY_B);
    }

    private static Response acquire(RequestSpecification as, String lcid, Map<String, Object> body) {
        return as.body(body).post("/v1/locks/{lcid}/acquire", lcid);
    }

    @Test
    void given_team_a_holds_an_lcid_when_team_b_uses_the_same_lcid_and_request_id_then_both_hold_their_own() {
        String lcid = unique("order");
        String tokenA = acquire(teamA(), lcid, fields("requestId", "pay-1", "payload", "a's")).then()
                .statusCode(200).extract().path("token");
        acquire(teamA(), lcid, fields("requestId", "stock-1")).then().statusCode(202);

        // Same lcid, same requestId: team B is granted its own lock, not queued behind A, no duplicate.
        String tokenB = acquire(teamB(), lcid, fields("requestId", "pay-1")).then().statusCode(200)
                .body("status", equalTo("ACQUIRED")).extract().path("token");

        assertThat(tokenB).isNotEqualTo(tokenA);
        teamB().get("/v1/locks/{lcid}", lcid).then().body("queueLength", equalTo(0))
                .body("activeRequestId", equalTo("pay-1"));
        teamB().get("/v1/locks/{lcid}/requests/{r}", lcid, "stock-1").then().statusCode(404);
        teamA().get("/v1/locks/{lcid}", lcid).then().body("queueLength", equalTo(1));
    }

    @Test
    void given_team_a_holds_a_lock_when_team_b_replays_its_token_then_lock_lost_and_a_is_untouched() {
        String lcid = unique("order");
        String tokenA = acquire(teamA(), lcid, fields("requestId", "pay-1")).then().extract().path("token");
        acquire(teamA(), lcid, fields("requestId", "stock-1")).then().statusCode(202);

        teamB().body(fields("token", tokenA, "requestId", "pay-1")).post("/v1/locks/{l}/complete", lcid).then()
                .statusCode(409).body("code", equalTo("LOCK_LOST"));
        teamB().body(fields("token", tokenA)).post("/v1/locks/{l}/heartbeat", lcid).then().statusCode(409);
        teamB().body(fields("requestId", "pay-1", "token", tokenA)).post("/v1/locks/{l}/abort", lcid).then()
                .statusCode(409);
        teamB().body(fields("requestId", "stock-1")).post("/v1/locks/{l}/abort", lcid).then().statusCode(404);

        teamA().get("/v1/locks/{lcid}", lcid).then().body("held", equalTo(true))
                .body("activeRequestId", equalTo("pay-1")).body("queueLength", equalTo(1));
        teamA().body(fields("token", tokenA, "requestId", "pay-1")).post("/v1/locks/{l}/complete", lcid).then()
                .statusCode(200).body("request.requestId", equalTo("stock-1"));
    }

    @Test
    void given_orphaned_work_of_team_a_when_team_b_claims_then_it_gets_none_of_it() throws InterruptedException {
        String lcid = unique("order");
        acquire(teamA(), lcid, fields("requestId", "orphan", "leaseMs", 500)).then().statusCode(200);
        Thread.sleep(700);

        for (int i = 0; i < 50; i++) {
            Response claimed = teamB().post("/v1/claims");
            if (claimed.statusCode() == 204) {
                break;
            }
            assertThat(claimed.jsonPath().getString("lcid")).isNotEqualTo(lcid);
        }

        Response claimedByA = teamA().post("/v1/claims");
        List<String> seen = new java.util.ArrayList<>();
        while (claimedByA.statusCode() == 200) {
            seen.add(claimedByA.jsonPath().getString("lcid"));
            String l = claimedByA.jsonPath().getString("lcid");
            String r = claimedByA.jsonPath().getString("request.requestId");
            teamA().body(fields("token", claimedByA.jsonPath().getString("token"), "requestId", r))
                    .post("/v1/locks/{l}/complete", l).then().statusCode(200);
            claimedByA = teamA().post("/v1/claims");
        }
        assertThat(seen).contains(lcid);
    }
}
