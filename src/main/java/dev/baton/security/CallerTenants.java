package dev.baton.security;

import java.util.Set;
import java.util.TreeSet;

import jakarta.inject.Singleton;

import dev.baton.config.Tenants;

/** Every tenant a caller can speak for: those of the API keys, of the token rules, and the open one. */
@Singleton
public class CallerTenants implements Tenants {

    private final Set<String> all;

    public CallerTenants(ApiKeys keys, TokenRules rules) {
        Set<String> tenants = new TreeSet<>(keys.tenants());
        tenants.addAll(rules.tenants());
        tenants.add(Caller.OPEN.tenant());
        this.all = Set.copyOf(tenants);
    }

    @Override
    public Set<String> all() {
        return all;
    }
}
