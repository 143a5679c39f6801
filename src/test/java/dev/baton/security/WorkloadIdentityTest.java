package dev.baton.security;

import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.unique;
import static dev.baton.testing.TestIssuer.serviceAccount;
import static dev.baton.testing.TestIssuer.sign;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import java.util.List;

import org.jose4j.jwk.RsaJsonWebKey;
import org.jose4j.jwt.JwtClaims;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.baton.testing.AuthEnabledProfile;
import dev.baton.testing.JwksServerResource;
import dev.baton.testing.RedisTestResource;
import dev.baton.testing.TestIssuer;
import dev.baton.testing.WorkloadIdentityProfile;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.specification.RequestSpecification;

/** Kubernetes service-account tokens (and other JWTs) as credentials, next to API keys. */
@QuarkusTest
@TestProfile(WorkloadIdentityProfile.class)
@WithTestResource(RedisTestResource.class)
@WithTestResource(JwksServerResource.class)
class WorkloadIdentityTest {

    /** The issuer's key, trusted through the JWKS. */
    static final RsaJsonWebKey TRUSTED = TestIssuer.newKey("cluster-key-1");
    /** A key the JWKS never published. */
    static final RsaJsonWebKey FORGER = TestIssuer.newKey("cluster-key-1");

    @BeforeEach
    void the_issuer_publishes_its_key() {
        TestIssuer.publish(TRUSTED);
    }

    static RequestSpecification as(String token) {
        return client().auth().oauth2(token);
    }

    static String token(JwtClaims claims) {
        return sign(claims, TRUSTED);
    }

    static void refused(String token, String detail) {
        as(token).body(fields("requestId", "a")).post("/v1/locks/{lcid}/acquire", unique("order")).then()
                .statusCode(401)
                .contentType("application/problem+json")
                .header("WWW-Authenticate", BearerAuthMechanism.CHALLENGE)
                .body("code", equalTo("UNAUTHORIZED"))
                .body("detail", containsString(detail));
    }

    @Test
    void given_a_worker_service_account_token_then_the_protocol_works_in_its_tenant() {
        String token = token(serviceAccount("orders", "payment-svc"));
        String lcid = unique("order");
        String lock = as(token).body(fields("requestId", "pay-1")).post("/v1/locks/{lcid}/acquire", lcid).then()
                .statusCode(200).body("status", equalTo("ACQUIRED")).extract().path("token");
        as(token).get("/v1/locks/{lcid}", lcid).then().statusCode(200).body("held", equalTo(true));
        as(token).body(fields("token", lock, "requestId", "pay-1")).post("/v1/locks/{lcid}/complete", lcid).then()
                .statusCode(200).body("status", equalTo("RELEASED"));
        // A worker may not run operator actions.
        as(token).get("/v1/dead-letters").then().statusCode(403).contentType("application/problem+json")
                .header("WWW-Authenticate", BearerAuthMechanism.FORBIDDEN_CHALLENGE)
                .body("code", equalTo("FORBIDDEN"));
    }

    @Test
    void given_an_admin_service_account_token_then_operator_actions_are_allowed() {
        String token = token(serviceAccount("orders", "baton-operator"));
        as(token).get("/v1/dead-letters").then().statusCode(200);
        as(token).get("/v1/locks/{lcid}/queue", unique("order")).then().statusCode(200);
    }

    @Test
    void given_a_namespace_wildcard_rule_then_any_service_account_of_it_is_a_worker() {
        String token = token(serviceAccount("billing", "invoice-job"));
        as(token).body(fields("requestId", "a")).post("/v1/locks/{lcid}/acquire", unique("invoice")).then()
                .statusCode(200);
        as(token).get("/v1/dead-letters").then().statusCode(403);
    }

    @Test
    void given_a_claim_rule_then_a_generic_oidc_token_maps_by_claim_and_an_array_claim_by_element() {
        JwtClaims ci = TestIssuer.claims("ci-runner-17");
        ci.setClaim("azp", "team-a-ci");
        as(token(ci)).get("/v1/locks/{lcid}", unique("order")).then().statusCode(200);

        JwtClaims oncall = TestIssuer.claims("alice@example.com");
        oncall.setStringListClaim("groups", List.of("staff", "ops-oncall"));
        as(token(oncall)).get("/v1/dead-letters").then().statusCode(200);
    }

    @Test
    void given_a_valid_token_that_no_rule_maps_then_403_not_a_default_tenant() {
        as(token(serviceAccount("orders", "unknown-svc"))).body(fields("requestId", "a"))
                .post("/v1/locks/{lcid}/acquire", unique("order")).then()
                .statusCode(403).contentType("application/problem+json")
                .body("code", equalTo("FORBIDDEN")).body("detail", containsString("no rule"));
        as(token(TestIssuer.claims("someone"))).get("/v1/locks/{lcid}", "order").then().statusCode(403);
    }

    @Test
    void given_a_worker_token_claiming_admin_groups_then_its_own_claims_grant_nothing() {
        JwtClaims claims = serviceAccount("orders", "payment-svc");
        claims.setStringListClaim("groups", List.of("admin", "worker"));
        as(token(claims)).get("/v1/dead-letters").then().statusCode(403);
    }

    @Test
    void given_a_token_of_tenant_orders_then_it_sees_nothing_of_tenant_team_a_on_the_same_lcid() {
        String lcid = unique("order");
        // team-a holds the lcid (with its API key), with one request queued.
        client().auth().oauth2(AuthEnabledProfile.KEY_A).body(fields("requestId", "a-1", "payload", "a's"))
                .post("/v1/locks/{lcid}/acquire", lcid).then().statusCode(200);
        client().auth().oauth2(AuthEnabledProfile.KEY_A).body(fields("requestId", "a-2"))
                .post("/v1/locks/{lcid}/acquire", lcid).then().statusCode(202);

        String orders = token(serviceAccount("orders", "payment-svc"));
        as(orders).get("/v1/locks/{lcid}", lcid).then().statusCode(200).body("held", equalTo(false))
                .body("queueLength", equalTo(0));
        as(orders).get("/v1/locks/{lcid}/requests/{r}", lcid, "a-1").then().statusCode(404);
        // The same lcid and requestId in tenant orders is a lock of its own, granted at once.
        as(orders).body(fields("requestId", "a-1")).post("/v1/locks/{lcid}/acquire", lcid).then().statusCode(200)
                .body("status", equalTo("ACQUIRED"));

        // A token that maps to team-a (by claim) shares team-a's lcids with its API keys.
        JwtClaims ci = TestIssuer.claims("ci-runner-17");
        ci.setClaim("azp", "team-a-ci");
        as(token(ci)).get("/v1/locks/{lcid}", lcid).then().body("held", equalTo(true))
                .body("activeRequestId", equalTo("a-1")).body("queueLength", equalTo(1));
    }

    @Test
    void given_api_keys_alongside_then_they_keep_working() {
        String lcid = unique("order");
        client().auth().oauth2(AuthEnabledProfile.KEY_B).body(fields("requestId", "a"))
                .post("/v1/locks/{lcid}/acquire", lcid).then().statusCode(200);
        client().auth().oauth2("not-a-key").get("/v1/locks/{lcid}", lcid).then().statusCode(401)
                .header("WWW-Authenticate", BearerAuthMechanism.CHALLENGE)
                .body("detail", equalTo("the API key is not valid"));
    }

    @Test
    void given_no_token_then_401_with_the_bearer_challenge() {
        client().body(fields("requestId", "a")).post("/v1/locks/{lcid}/acquire", unique("order")).then()
                .statusCode(401).contentType("application/problem+json")
                .header("WWW-Authenticate", BearerAuthMechanism.CHALLENGE)
                .body("code", equalTo("UNAUTHORIZED"));
    }

    @Test
    void given_an_expired_token_then_401() {
        JwtClaims claims = serviceAccount("orders", "payment-svc");
        claims.setIssuedAt(TestIssuer.secondsFromNow(-3600));
        claims.setNotBefore(TestIssuer.secondsFromNow(-3600));
        claims.setExpirationTime(TestIssuer.secondsFromNow(-120));
        refused(token(claims), "expired");
    }

    @Test
    void given_a_token_expired_within_the_clock_skew_then_it_is_still_accepted() {
        JwtClaims claims = serviceAccount("orders", "payment-svc");
        claims.setIssuedAt(TestIssuer.secondsFromNow(-600));
        claims.setNotBefore(TestIssuer.secondsFromNow(-600));
        claims.setExpirationTime(TestIssuer.secondsFromNow(-10)); // skew is 30 s by default
        as(token(claims)).get("/v1/locks/{lcid}", unique("order")).then().statusCode(200);
    }

    @Test
    void given_a_token_not_valid_yet_then_401() {
        JwtClaims claims = serviceAccount("orders", "payment-svc");
        claims.setNotBefore(TestIssuer.secondsFromNow(300));
        claims.setExpirationTime(TestIssuer.secondsFromNow(900));
        refused(token(claims), "not valid yet");
    }

    @Test
    void given_a_token_issued_in_the_future_beyond_the_clock_skew_then_401() {
        JwtClaims claims = serviceAccount("orders", "payment-svc");
        claims.setIssuedAt(TestIssuer.secondsFromNow(300)); // skew is 30 s by default
        claims.setNotBefore(TestIssuer.secondsFromNow(-60));
        claims.setExpirationTime(TestIssuer.secondsFromNow(900));
        refused(token(claims), "not valid yet");
    }

    @Test
    void given_a_token_issued_in_the_future_within_the_clock_skew_then_it_is_accepted() {
        JwtClaims claims = serviceAccount("orders", "payment-svc");
        claims.setIssuedAt(TestIssuer.secondsFromNow(10));
        claims.setNotBefore(TestIssuer.secondsFromNow(-60));
        as(token(claims)).get("/v1/locks/{lcid}", unique("order")).then().statusCode(200);
    }

    @Test
    void given_a_token_for_another_audience_then_401() {
        JwtClaims claims = serviceAccount("orders", "payment-svc");
        claims.setAudience("https://kubernetes.default.svc.cluster.local"); // the API server's own token
        refused(token(claims), "audience");
        JwtClaims none = serviceAccount("orders", "payment-svc");
        none.unsetClaim("aud");
        refused(token(none), "audience");
    }

    @Test
    void given_a_token_of_another_issuer_then_401() {
        JwtClaims claims = serviceAccount("orders", "payment-svc");
        claims.setIssuer("https://other-cluster.example");
        refused(token(claims), "issuer");
    }

    @Test
    void given_a_token_signed_by_another_key_under_the_trusted_key_id_then_401() {
        refused(sign(serviceAccount("orders", "payment-svc"), FORGER, TRUSTED.getKeyId()), "signature");
    }

    @Test
    void given_an_unsigned_token_alg_none_then_401() {
        refused(TestIssuer.unsigned(serviceAccount("orders", "baton-operator"), TRUSTED.getKeyId()), "algorithm");
    }

    @Test
    void given_hs256_signed_with_the_public_key_as_secret_then_401() {
        refused(TestIssuer.hmacWithPublicKey(serviceAccount("orders", "baton-operator"), TRUSTED), "algorithm");
    }

    @Test
    void given_a_malformed_token_then_401() {
        refused("eyJhbGciOiJSUzI1NiJ9.not-json.c2ln", "well-formed");
        refused("a.b.c", "well-formed");
    }

    @Test
    void given_a_token_without_expiry_then_401() {
        JwtClaims claims = serviceAccount("orders", "payment-svc");
        claims.unsetClaim("exp");
        refused(token(claims), "no expiry");
    }

    /**
     * The only test that shows the service an unknown key id: the first one fetches the JWKS at
     * once, later ones at most every jwks-forced-refresh-minutes. The old key stays published, as
     * issuers do while old tokens are still alive.
     */
    @Test
    void given_the_issuer_rotates_to_a_new_key_id_then_its_tokens_verify_without_a_restart() {
        JwtClaims claims = serviceAccount("orders", "payment-svc");
        as(token(claims)).get("/v1/locks/{lcid}", unique("order")).then().statusCode(200);

        RsaJsonWebKey next = TestIssuer.newKey("cluster-key-2");
        TestIssuer.publish(TRUSTED, next);
        as(sign(claims, next)).get("/v1/locks/{lcid}", unique("order")).then().statusCode(200);
        as(token(claims)).get("/v1/locks/{lcid}", unique("order")).then().statusCode(200);
    }
}
