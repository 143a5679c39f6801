package dev.baton.security;

/** Who is calling: the tenant whose lcids it may touch, and whether it may run operator actions. */
public record Caller(String tenant, boolean admin) {

    /** With authentication off (dev, tests, or explicitly disabled) everyone is this caller. */
    public static final Caller OPEN = new Caller("default", true);
}
