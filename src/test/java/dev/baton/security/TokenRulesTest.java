package dev.baton.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.eclipse.microprofile.jwt.JsonWebToken;
import org.jose4j.jwt.JwtClaims;
import org.jose4j.jwt.consumer.JwtConsumerBuilder;
import org.junit.jupiter.api.Test;

import io.smallrye.jwt.auth.principal.DefaultJWTCallerPrincipal;

/** Which tenant and role a verified token gets: the operator's rules, first match wins, nothing by default. */
class TokenRulesTest {

    private static final TokenRules RULES = new TokenRules(List.of(
            "orders/payment-svc=orders:worker",
            "orders/baton-operator=orders:admin",
            "orders/*=orders-other:worker",
            "claim:azp:https://ci.example.com/app=team-a:worker",
            "claim:groups:ops=team-b:admin"));

    /** A token as smallrye-jwt hands it over after verification (claims parsed from JSON, as from the wire). */
    private static JsonWebToken token(Map<String, Object> claims) {
        JwtClaims set = new JwtClaims();
        claims.forEach(set::setClaim);
        try {
            JwtClaims parsed = new JwtConsumerBuilder().setSkipAllValidators().setDisableRequireSignature()
                    .setSkipSignatureVerification().build().processToClaims(unsigned(set));
            return new DefaultJWTCallerPrincipal(parsed);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String unsigned(JwtClaims claims) throws Exception {
        org.jose4j.jws.JsonWebSignature jws = new org.jose4j.jws.JsonWebSignature();
        jws.setPayload(claims.toJson());
        jws.setAlgorithmHeaderValue("none");
        jws.setAlgorithmConstraints(org.jose4j.jwa.AlgorithmConstraints.NO_CONSTRAINTS);
        return jws.getCompactSerialization();
    }

    private static Map<String, Object> kubernetes(String namespace, String account) {
        return Map.of("sub", "system:serviceaccount:" + namespace + ":" + account,
                "kubernetes.io", Map.of("namespace", namespace, "serviceaccount", Map.of("name", account)));
    }

    @Test
    void given_a_service_account_then_the_first_matching_rule_decides() {
        assertThat(RULES.match(token(kubernetes("orders", "payment-svc")))).contains(new Caller("orders", false));
        assertThat(RULES.match(token(kubernetes("orders", "baton-operator")))).contains(new Caller("orders", true));
        assertThat(RULES.match(token(kubernetes("orders", "reporting")))).contains(new Caller("orders-other", false));
        assertThat(RULES.match(token(kubernetes("billing", "payment-svc")))).isEmpty();
    }

    @Test
    void given_no_kubernetes_claim_then_the_service_account_subject_is_read() {
        assertThat(RULES.match(token(Map.of("sub", "system:serviceaccount:orders:payment-svc"))))
                .contains(new Caller("orders", false));
        assertThat(RULES.match(token(Map.of("sub", "orders/payment-svc")))).isEmpty();
    }

    @Test
    void given_claim_rules_then_a_value_with_colons_and_an_array_element_match() {
        assertThat(RULES.match(token(Map.of("sub", "x", "azp", "https://ci.example.com/app"))))
                .contains(new Caller("team-a", false));
        assertThat(RULES.match(token(Map.of("sub", "x", "groups", List.of("staff", "ops")))))
                .contains(new Caller("team-b", true));
        assertThat(RULES.match(token(Map.of("sub", "x", "groups", List.of("operations"))))).isEmpty();
        assertThat(RULES.match(token(Map.of("sub", "x", "azp", "https://ci.example.com/app2")))).isEmpty();
    }

    @Test
    void given_a_malformed_rule_then_startup_fails_naming_its_index_not_its_value() {
        for (String bad : List.of("orders/payment-svc", "orders/payment-svc=orders", "orders/payment-svc=orders:root",
                "Orders/payment-svc=orders:worker", "orders=orders:worker", "claim:azp=team:worker",
                "claim::x=team:worker", "orders/svc=bad tenant:worker")) {
            assertThatThrownBy(() -> new TokenRules(List.of("orders/*=orders:worker", bad)))
                    .as(bad).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("baton.auth.jwt.rules[1]: ");
        }
        assertThat(new TokenRules(List.of()).match(token(kubernetes("orders", "payment-svc")))).isEqualTo(Optional.empty());
    }

    @Test
    void the_rules_name_their_tenants_for_background_work() {
        assertThat(RULES.tenants()).containsExactly("orders", "orders-other", "team-a", "team-b");
    }
}
