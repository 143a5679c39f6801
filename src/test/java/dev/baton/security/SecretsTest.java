package dev.baton.security;

import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.baton.testing.AuthEnabledProfile;
import dev.baton.testing.LogCapture;
import dev.baton.testing.RedisTestResource;
import dev.baton.testing.SecretsProfile;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.specification.RequestSpecification;

/** Tokens and API keys are capabilities: no log line and no view may ever contain one. */
@QuarkusTest
@TestProfile(SecretsProfile.class)
@WithTestResource(RedisTestResource.class)
class SecretsTest {

    private static final String PAYLOAD_SECRET = "4111-1111-1111-1111";
    private static final String RESULT_SECRET = "receipt-secret-9d2";

    private LogCapture logs;

    @BeforeEach
    void captureLogs() {
        logs = LogCapture.start();
    }

    @AfterEach
    void stopCapturing() {
        logs.stop();
    }

    private static RequestSpecification teamA() {
        return client().auth().oauth2(AuthEnabledProfile.KEY_A);
    }

    @Test
    void given_a_full_exchange_including_failures_then_no_token_key_payload_or_result_is_logged_or_shown() {
        String lcid = unique("order");
        List<String> tokens = new ArrayList<>();
        String token = teamA().body(fields("requestId", "a")).post("/v1/locks/{l}/acquire", lcid).then()
                .statusCode(200).extract().path("token");
        tokens.add(token);
        teamA().body(fields("requestId", "b", "payload", java.util.Map.of("card", PAYLOAD_SECRET)))
                .post("/v1/locks/{l}/acquire", lcid).then().statusCode(202);
        teamA().body(fields("token", token)).post("/v1/locks/{l}/heartbeat", lcid).then().statusCode(200);
        teamA().body(fields("token", token, "requestId", "a", "result", java.util.Map.of("receipt", RESULT_SECRET)))
                .post("/v1/locks/{l}/complete", lcid).then().statusCode(200).body("status", equalTo("NEXT"));
        teamA().body(fields("token", token + "x", "requestId", "b")).post("/v1/locks/{l}/complete", lcid).then()
                .statusCode(409);
        teamA().body(fields("token", token, "requestId", "b", "requeue", true)).post("/v1/locks/{l}/abort", lcid)
                .then().statusCode(200);
        String claimed = teamA().body(fields("leaseMs", 1000)).post("/v1/claims").then().statusCode(200)
                .extract().path("token");
        tokens.add(claimed);
        client().auth().oauth2("wrong-" + AuthEnabledProfile.KEY_A).get("/v1/locks/{l}", lcid).then().statusCode(401);

        String lockView = teamA().get("/v1/locks/{l}", lcid).then().statusCode(200).extract().asString();
        String requestView = teamA().get("/v1/locks/{l}/requests/{r}", lcid, "b").then().statusCode(200)
                .extract().asString();

        assertThat(logs.lines()).as("Baton's DEBUG lines about the exchange were captured")
                .anyMatch(line -> line.contains("ACQUIRE team-a|" + lcid));
        assertThat(logs.lines()).as("the operator's line about the stale token was captured")
                .anyMatch(line -> line.contains("no longer holds the lock") && line.contains(lcid));
        String log = String.join("\n", logs.lines());
        assertThat(log).doesNotContain(PAYLOAD_SECRET).doesNotContain(RESULT_SECRET);
        for (String secret : List.of(tokens.get(0), tokens.get(1), AuthEnabledProfile.KEY_A)) {
            assertThat(log).doesNotContain(secret);
            assertThat(lockView).doesNotContain(secret);
            assertThat(requestView).doesNotContain(secret);
        }
        assertThat(token).hasSize(43); // 256 random bits, base64url
    }
}
