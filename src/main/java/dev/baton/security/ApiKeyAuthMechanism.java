package dev.baton.security;

import java.util.Optional;
import java.util.Set;

import jakarta.enterprise.context.ApplicationScoped;

import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.credential.TokenCredential;
import io.quarkus.security.identity.IdentityProviderManager;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.security.identity.request.AuthenticationRequest;
import io.quarkus.security.identity.request.TokenAuthenticationRequest;
import io.quarkus.vertx.http.runtime.security.ChallengeData;
import io.quarkus.vertx.http.runtime.security.HttpAuthenticationMechanism;
import io.smallrye.mutiny.Uni;
import io.vertx.ext.web.RoutingContext;

/** {@code Authorization: Bearer <api key>} on the API port. No header: anonymous (refused later). */
@ApplicationScoped
public class ApiKeyAuthMechanism implements HttpAuthenticationMechanism {

    private static final String BEARER = "Bearer ";

    private final ApiKeys keys;

    public ApiKeyAuthMechanism(ApiKeys keys) {
        this.keys = keys;
    }

    @Override
    public Uni<SecurityIdentity> authenticate(RoutingContext context, IdentityProviderManager identities) {
        String header = context.request().getHeader("Authorization");
        if (!keys.enabled() || header == null) {
            return Uni.createFrom().optional(Optional.empty());
        }
        if (!header.regionMatches(true, 0, BEARER, 0, BEARER.length()) || header.length() <= BEARER.length()) {
            return Uni.createFrom().failure(new AuthenticationFailedException("expected Authorization: Bearer <key>"));
        }
        String key = header.substring(BEARER.length()).trim();
        return identities.authenticate(new TokenAuthenticationRequest(new TokenCredential(key, "bearer")));
    }

    @Override
    public Uni<ChallengeData> getChallenge(RoutingContext context) {
        return Uni.createFrom().item(new ChallengeData(401, "WWW-Authenticate", "Bearer realm=\"baton\""));
    }

    @Override
    public Set<Class<? extends AuthenticationRequest>> getCredentialTypes() {
        return Set.of(TokenAuthenticationRequest.class);
    }
}
