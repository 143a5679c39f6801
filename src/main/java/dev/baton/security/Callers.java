package dev.baton.security;

import jakarta.enterprise.context.ApplicationScoped;

import io.quarkus.security.identity.SecurityIdentity;

/** The caller of the current request, from its (already authenticated) security identity. */
@ApplicationScoped
public class Callers {

    private final ApiKeys keys;

    public Callers(ApiKeys keys) {
        this.keys = keys;
    }

    public Caller of(SecurityIdentity identity) {
        if (!keys.enabled()) {
            return Caller.OPEN;
        }
        if (identity == null || identity.isAnonymous()) {
            throw new AccessDenied(AccessDenied.Reason.UNAUTHENTICATED, "send Authorization: Bearer <API key>");
        }
        return new Caller(identity.getAttribute(ApiKeyIdentityProvider.TENANT),
                identity.hasRole(ApiKeyIdentityProvider.ADMIN));
    }

    /** Operator actions (dead letters, retry) need a key marked admin. */
    public Caller admin(SecurityIdentity identity) {
        Caller caller = of(identity);
        if (!caller.admin()) {
            throw new AccessDenied(AccessDenied.Reason.FORBIDDEN, "this API key may not run operator actions");
        }
        return caller;
    }
}
