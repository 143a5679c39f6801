package dev.baton.security;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.jwt.JsonWebToken;

import io.quarkus.security.identity.AuthenticationRequestContext;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.security.identity.SecurityIdentityAugmentor;
import io.smallrye.mutiny.Uni;

/**
 * Replaces the identity smallrye-jwt built from a verified token by one of Baton's own: tenant and
 * role from {@link TokenRules}, nothing else. smallrye-jwt grants the token's {@code groups} claim
 * as roles; keeping them would let whoever can mint a token for the audience make itself admin.
 */
@ApplicationScoped
public class TokenIdentityAugmentor implements SecurityIdentityAugmentor {

    private final TokenRules rules;

    public TokenIdentityAugmentor(TokenRules rules) {
        this.rules = rules;
    }

    @Override
    public Uni<SecurityIdentity> augment(SecurityIdentity identity, AuthenticationRequestContext context) {
        if (!(identity.getPrincipal() instanceof JsonWebToken token)) {
            return Uni.createFrom().item(identity);
        }
        String subject = token.getSubject() != null ? token.getSubject() : token.getName();
        SecurityIdentity caller = rules.match(token)
                .map(rule -> CallerIdentity.of(subject, rule))
                .orElseGet(() -> CallerIdentity.unmapped(subject));
        return Uni.createFrom().item(CallerIdentity.expiringAt(caller, token.getExpirationTime()));
    }
}
