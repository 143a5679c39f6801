package dev.baton.security;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.json.JsonNumber;

import org.eclipse.microprofile.jwt.Claims;
import org.eclipse.microprofile.jwt.JsonWebToken;

import dev.baton.config.BatonConfig;

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
    private final long skewSeconds;

    public TokenIdentityAugmentor(TokenRules rules, BatonConfig config) {
        this.rules = rules;
        this.skewSeconds = config.auth().jwt().clockSkewSeconds();
    }

    @Override
    public Uni<SecurityIdentity> augment(SecurityIdentity identity, AuthenticationRequestContext context) {
        if (!(identity.getPrincipal() instanceof JsonWebToken token)) {
            return Uni.createFrom().item(identity);
        }
        if (issuedInTheFuture(token)) {
            return Uni.createFrom().failure(TokenRejection.NOT_YET_VALID.exception());
        }
        String subject = token.getSubject() != null ? token.getSubject() : token.getName();
        SecurityIdentity caller = rules.match(token)
                .map(rule -> CallerIdentity.of(subject, rule))
                .orElseGet(() -> CallerIdentity.unmapped(subject));
        return Uni.createFrom().item(CallerIdentity.expiringAt(caller, token.getExpirationTime()));
    }

    /**
     * smallrye-jwt checks exp and nbf but not iat (jose4j checks it only when a maximum token age
     * is configured, which would also refuse long-lived tokens): a token stamped as issued later
     * than now + the clock skew was minted by a wrong clock or forged for later, and is refused.
     * A token without iat is not refused for that.
     */
    private boolean issuedInTheFuture(JsonWebToken token) {
        Object iat = token.getClaim(Claims.iat.name());
        long seconds;
        if (iat instanceof Number number) {
            seconds = number.longValue();
        } else if (iat instanceof JsonNumber number) {
            seconds = number.longValue();
        } else {
            return false;
        }
        return seconds > System.currentTimeMillis() / 1000 + skewSeconds;
    }
}
