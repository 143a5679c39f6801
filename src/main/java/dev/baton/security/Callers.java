package dev.baton.security;

import jakarta.enterprise.context.ApplicationScoped;

import dev.baton.config.BatonConfig;
import io.quarkus.security.identity.SecurityIdentity;

/** The caller of the current request, from its (already authenticated) security identity. */
@ApplicationScoped
public class Callers {

    private final boolean enabled;

    public Callers(BatonConfig config) {
        this.enabled = config.auth().enabled();
    }

    public Caller of(SecurityIdentity identity) {
        if (!enabled) {
            return Caller.OPEN;
        }
        if (identity == null || identity.isAnonymous()) {
            throw new AccessDenied(AccessDenied.Reason.UNAUTHENTICATED,
                    "send Authorization: Bearer <API key or token>");
        }
        String tenant = identity.getAttribute(CallerIdentity.TENANT);
        if (tenant == null) {
            throw new AccessDenied(AccessDenied.Reason.FORBIDDEN,
                    "the token is valid, but no rule of baton.auth.jwt.rules maps it to a tenant");
        }
        return new Caller(tenant, identity.hasRole(CallerIdentity.ADMIN));
    }

    /** Operator actions (dead letters, retry, queue views) need the admin role. */
    public Caller admin(SecurityIdentity identity) {
        Caller caller = of(identity);
        if (!caller.admin()) {
            throw new AccessDenied(AccessDenied.Reason.FORBIDDEN,
                    "operator actions need the admin role: an API key marked admin, or a token whose rule says admin");
        }
        return caller;
    }
}
