package dev.baton.config;

import java.util.Set;

/**
 * The tenants this service serves, for work no caller starts (index sweeps): whoever knows the
 * callers (the API keys) provides it, so background work needs no security types.
 */
public interface Tenants {

    /** Every tenant that may have keys in Redis, the open (no authentication) tenant included. */
    Set<String> all();
}
