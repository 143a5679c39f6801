package dev.baton.ops;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import dev.baton.config.BatonConfig;

/** The service refuses to start when no caller could get in, or when tokens could not be verified safely. */
class AuthSettingsTest {

    record Jwt(boolean enabled, Optional<String> jwks, Optional<String> issuer, List<String> audience,
            int clockSkewSeconds, List<String> algorithms, Optional<String> caCertificate, int jwksCacheMinutes,
            int jwksForcedRefreshMinutes, Optional<List<String>> rules) implements BatonConfig.Jwt {

        static Jwt on() {
            return new Jwt(true, Optional.of("https://kubernetes.default.svc/openid/v1/jwks"),
                    Optional.of("https://kubernetes.default.svc.cluster.local"), List.of("baton"), 30,
                    List.of("RS256"), Optional.empty(), 60, 5, Optional.of(List.of("orders/*=orders:worker")));
        }

        static Jwt off() {
            return new Jwt(false, Optional.empty(), Optional.empty(), List.of("baton"), 30, List.of("RS256"),
                    Optional.empty(), 60, 5, Optional.empty());
        }
    }

    record Auth(boolean enabled, Optional<List<String>> apiKeys, boolean apiKeysEnabled, BatonConfig.Jwt jwt)
            implements BatonConfig.Auth {
    }

    private static final Optional<List<String>> KEYS = Optional.of(List.of("orders:" + "a".repeat(64)));

    @Test
    void given_api_keys_or_tokens_or_no_authentication_then_it_starts() {
        assertThatCode(() -> StartupChecks.checkAuth(new Auth(true, KEYS, true, Jwt.off()))).doesNotThrowAnyException();
        assertThatCode(() -> StartupChecks.checkAuth(new Auth(true, Optional.empty(), false, Jwt.on())))
                .doesNotThrowAnyException();
        assertThatCode(() -> StartupChecks.checkAuth(new Auth(false, Optional.empty(), true, Jwt.off())))
                .doesNotThrowAnyException();
    }

    @Test
    void given_no_way_in_then_it_refuses_to_start() {
        assertThatThrownBy(() -> StartupChecks.checkAuth(new Auth(true, Optional.empty(), true, Jwt.off())))
                .hasMessageContaining("API keys or workload tokens");
        assertThatThrownBy(() -> StartupChecks.checkAuth(new Auth(true, KEYS, false, Jwt.off())))
                .hasMessageContaining("API keys or workload tokens");
    }

    @Test
    void given_tokens_without_a_jwks_an_issuer_or_rules_then_it_refuses_to_start() {
        Jwt on = Jwt.on();
        assertThatThrownBy(() -> check(new Jwt(true, Optional.empty(), on.issuer(), on.audience(), 30, on.algorithms(),
                Optional.empty(), 60, 5, on.rules()))).hasMessageContaining("baton.auth.jwt.jwks");
        assertThatThrownBy(() -> check(new Jwt(true, on.jwks(), Optional.empty(), on.audience(), 30, on.algorithms(),
                Optional.empty(), 60, 5, on.rules()))).hasMessageContaining("baton.auth.jwt.issuer");
        assertThatThrownBy(() -> check(new Jwt(true, on.jwks(), on.issuer(), on.audience(), 30, on.algorithms(),
                Optional.empty(), 60, 5, Optional.of(List.of())))).hasMessageContaining("baton.auth.jwt.rules is empty");
    }

    @Test
    void given_a_symmetric_or_no_algorithm_then_it_refuses_to_start() {
        Jwt on = Jwt.on();
        for (String algorithm : List.of("HS256", "none", "HS512")) {
            assertThatThrownBy(() -> check(new Jwt(true, on.jwks(), on.issuer(), on.audience(), 30,
                    List.of("RS256", algorithm), Optional.empty(), 60, 5, on.rules())))
                    .hasMessageContaining(algorithm + " is not accepted");
        }
        assertThatCode(() -> check(new Jwt(true, on.jwks(), on.issuer(), on.audience(), 30, List.of("RS256", "ES256"),
                Optional.empty(), 60, 5, on.rules()))).doesNotThrowAnyException();
    }

    @Test
    void given_a_skew_or_refresh_out_of_range_then_it_refuses_to_start() {
        Jwt on = Jwt.on();
        for (int skew : new int[] {0, -1, 3600}) {
            assertThatThrownBy(() -> check(new Jwt(true, on.jwks(), on.issuer(), on.audience(), skew, on.algorithms(),
                    Optional.empty(), 60, 5, on.rules()))).hasMessageContaining("clock-skew-seconds");
        }
        assertThatThrownBy(() -> check(new Jwt(true, on.jwks(), on.issuer(), on.audience(), 30, on.algorithms(),
                Optional.empty(), 60, 0, on.rules()))).hasMessageContaining("forced-refresh");
        assertThatThrownBy(() -> check(new Jwt(true, on.jwks(), on.issuer(), List.of(), 30, on.algorithms(),
                Optional.empty(), 60, 5, on.rules()))).hasMessageContaining("audience");
    }

    private static void check(Jwt jwt) {
        StartupChecks.checkAuth(new Auth(true, Optional.empty(), false, jwt));
    }
}
