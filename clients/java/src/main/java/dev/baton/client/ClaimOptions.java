package dev.baton.client;

import java.util.function.BooleanSupplier;

/**
 * Options of {@link BatonClient#claim} and {@link BatonClient#runClaims}.
 *
 * @param lcidPrefix only lcids starting with it (null: any lcid of the tenant)
 * @param leaseMs    the claimed lock's lease (null: 30000); short leases bound the delay after a lost claim answer
 * @param take       how many queued requests of the lcid to be handed at once (null: 1)
 * @param stop       runClaims only: polled between claims; true stops the poller (null: until interrupted)
 */
public record ClaimOptions(String lcidPrefix, Integer leaseMs, Integer take, BooleanSupplier stop) {
    public static ClaimOptions defaults() {
        return new ClaimOptions(null, null, null, null);
    }

    public ClaimOptions lcidPrefix(String p) {
        return new ClaimOptions(p, leaseMs, take, stop);
    }

    public ClaimOptions leaseMs(Integer ms) {
        return new ClaimOptions(lcidPrefix, ms, take, stop);
    }

    public ClaimOptions take(Integer n) {
        return new ClaimOptions(lcidPrefix, leaseMs, n, stop);
    }

    public ClaimOptions stop(BooleanSupplier s) {
        return new ClaimOptions(lcidPrefix, leaseMs, take, s);
    }
}
