package dev.baton.client;

/**
 * The client's version, which is the protocol version it speaks: here, where every part may read it (the
 * User-Agent, the tracer), rather than in the facade, which no part may name. {@link BatonClient#VERSION} is this.
 */
final class Version {
    static final String CLIENT = "1.2.0-SNAPSHOT";

    private Version() {
    }
}
