package dev.baton.security;

import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.unique;
import static dev.baton.testing.TestIssuer.serviceAccount;
import static dev.baton.testing.TestIssuer.sign;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.util.List;

import org.jose4j.jwk.RsaJsonWebKey;
import org.jose4j.jwt.JwtClaims;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.baton.testing.AuthEnabledProfile;
import dev.baton.testing.JwksServerResource;
import dev.baton.testing.LogCapture;
import dev.baton.testing.RedisTestResource;
import dev.baton.testing.TestIssuer;
import dev.baton.testing.TokensOnlyProfile;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/** API keys turned off: only workload tokens get in, and no log line ever repeats one or its claims. */
@QuarkusTest
@TestProfile(TokensOnlyProfile.class)
@WithTestResource(RedisTestResource.class)
@WithTestResource(JwksServerResource.class)
class TokensOnlyTest {

    static final RsaJsonWebKey KEY = TestIssuer.newKey("only-key-1");
    static final String POD_MARKER = "pod-marker-5f1e9a";

    private LogCapture logs;

    @BeforeEach
    void publish_and_capture() {
        TestIssuer.publish(KEY);
        logs = LogCapture.start();
    }

    @AfterEach
    void stopCapturing() {
        logs.stop();
    }

    @Test
    void given_api_keys_are_off_when_a_valid_key_is_sent_then_401_and_a_token_still_works() {
        client().auth().oauth2(AuthEnabledProfile.KEY_A).get("/v1/locks/{lcid}", unique("order")).then()
                .statusCode(401).header("WWW-Authenticate", BearerAuthMechanism.CHALLENGE)
                .body("detail", equalTo("this service accepts JWTs only, and this token is not one"));
        client().auth().oauth2(sign(serviceAccount("orders", "payment-svc"), KEY))
                .body(fields("requestId", "a")).post("/v1/locks/{lcid}/acquire", unique("order")).then()
                .statusCode(200);
    }

    @Test
    void given_accepted_and_refused_tokens_then_no_log_line_holds_a_token_or_a_claim_beyond_the_subject() {
        JwtClaims good = marked("payment-svc");
        JwtClaims expired = marked("payment-svc");
        expired.setExpirationTime(TestIssuer.secondsFromNow(-600));
        JwtClaims unmapped = marked("nobody");
        JwtClaims otherAudience = marked("payment-svc");
        otherAudience.setAudience("someone-else");
        List<String> tokens = List.of(sign(good, KEY), sign(expired, KEY), sign(unmapped, KEY),
                sign(otherAudience, KEY), sign(good, TestIssuer.newKey("only-key-1")));
        String lcid = unique("order");
        List<Integer> statuses = new java.util.ArrayList<>();
        for (String token : tokens) {
            statuses.add(client().auth().oauth2(token).body(fields("requestId", "a"))
                    .post("/v1/locks/{lcid}/acquire", lcid).statusCode());
        }

        assertThat(statuses).containsExactly(200, 401, 403, 401, 401);
        assertThat(logs.lines()).as("Baton's DEBUG line about the accepted call was captured")
                .anyMatch(line -> line.contains("ACQUIRE orders|" + lcid));
        for (String line : logs.lines()) {
            for (String token : tokens) {
                for (String part : token.split("\\.")) {
                    assertThat(line).doesNotContain(part);
                }
            }
            assertThat(line).doesNotContain(POD_MARKER).doesNotContain("someone-else")
                    .doesNotContain("kubernetes.io");
        }
    }

    /** A claim value only this test knows, to look for in the logs. */
    private static JwtClaims marked(String account) {
        JwtClaims claims = serviceAccount("orders", account);
        claims.setClaim("kubernetes.io", java.util.Map.of("namespace", "orders",
                "serviceaccount", java.util.Map.of("name", account), "pod", java.util.Map.of("name", POD_MARKER)));
        claims.setGeneratedJwtId();
        return claims;
    }
}
