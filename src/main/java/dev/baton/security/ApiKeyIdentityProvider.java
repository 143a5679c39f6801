package dev.baton.security;

import jakarta.enterprise.context.ApplicationScoped;

import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.identity.AuthenticationRequestContext;
import io.quarkus.security.identity.IdentityProvider;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.security.identity.request.TokenAuthenticationRequest;
import io.quarkus.security.runtime.QuarkusPrincipal;
import io.quarkus.security.runtime.QuarkusSecurityIdentity;
import io.smallrye.mutiny.Uni;

/** Turns a known API key into an identity carrying its tenant; an unknown key fails (401). */
@ApplicationScoped
public class ApiKeyIdentityProvider implements IdentityProvider<TokenAuthenticationRequest> {

    static final String TENANT = "baton.tenant";
    static final String ADMIN = "admin";

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
        return keys.find(request.getToken().getToken())
                .map(caller -> {
                    QuarkusSecurityIdentity.Builder identity = QuarkusSecurityIdentity.builder()
                            .setPrincipal(new QuarkusPrincipal(caller.tenant()))
                            .addAttribute(TENANT, caller.tenant())
                            .addRole("worker");
                    if (caller.admin()) {
                        identity.addRole(ADMIN);
                    }
                    return Uni.createFrom().<SecurityIdentity>item(identity.build());
                })
                .orElseGet(() -> Uni.createFrom().failure(new AuthenticationFailedException("unknown API key")));
    }
}
