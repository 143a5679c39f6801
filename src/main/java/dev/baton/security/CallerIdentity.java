package dev.baton.security;

import java.security.Principal;

import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.security.runtime.QuarkusPrincipal;
import io.quarkus.security.runtime.QuarkusSecurityIdentity;

/**
 * The one shape of an authenticated identity, whichever credential proved it: a tenant attribute
 * and the roles Baton itself granted. Nothing of the credential (a token's own groups or scopes)
 * is carried over, so a token cannot grant itself a role.
 */
final class CallerIdentity {

    static final String TENANT = "baton.tenant";
    static final String WORKER = "worker";
    static final String ADMIN = "admin";
    /** A token's {@code exp}, in epoch milliseconds: how long its verification may be reused. */
    static final String EXPIRES_AT_MS = "baton.expires-at-ms";

    private CallerIdentity() {
    }

    static SecurityIdentity of(String name, Caller caller) {
        QuarkusSecurityIdentity.Builder identity = QuarkusSecurityIdentity.builder()
                .setPrincipal(principal(name))
                .addAttribute(TENANT, caller.tenant())
                .addRole(WORKER);
        if (caller.admin()) {
            identity.addRole(ADMIN);
        }
        return identity.build();
    }

    /** Proved who it is, but no rule says which tenant it speaks for: refused with 403 by {@link Callers}. */
    static SecurityIdentity unmapped(String name) {
        return QuarkusSecurityIdentity.builder().setPrincipal(principal(name)).build();
    }

    static SecurityIdentity expiringAt(SecurityIdentity identity, long epochSeconds) {
        return QuarkusSecurityIdentity.builder(identity).addAttribute(EXPIRES_AT_MS, epochSeconds * 1000).build();
    }

    private static Principal principal(String name) {
        return new QuarkusPrincipal(name == null ? "" : name);
    }
}
