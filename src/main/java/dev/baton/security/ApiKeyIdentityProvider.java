package dev.baton.security;

import jakarta.enterprise.context.ApplicationScoped;

import io.quarkus.security.identity.AuthenticationRequestContext;
import io.quarkus.security.identity.IdentityProvider;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.security.identity.request.TokenAuthenticationRequest;
import io.quarkus.smallrye.jwt.runtime.auth.JsonWebTokenCredential;
import io.smallrye.mutiny.Uni;

/** Turns a known API key into an identity carrying its tenant; an unknown key fails (401). */
@ApplicationScoped
public class ApiKeyIdentityProvider implements IdentityProvider<TokenAuthenticationRequest> {

    private final ApiKeys keys;

    public ApiKeyIdentityProvider(ApiKeys keys) {
        this.keys = keys;
    }

    @Override
    public Class<TokenAuthenticationRequest> getRequestType() {
        return TokenAuthenticationRequest.class;
    }

    @Override
    public Uni<SecurityIdentity> authenticate(TokenAuthenticationRequest request, AuthenticationRequestContext context) {
        if (request.getToken() instanceof JsonWebTokenCredential) {
            return Uni.createFrom().nullItem(); // smallrye-jwt's to verify
        }
        return keys.find(request.getToken().getToken())
                .map(caller -> Uni.createFrom().item(CallerIdentity.of(caller.tenant(), caller)))
                .orElseGet(() -> Uni.createFrom().failure(TokenRejection.UNKNOWN_API_KEY.exception()));
    }
}
