package dev.baton.client;

import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Options of {@link BatonClient#claim} and {@link BatonClient#runClaims}.
 *
 * @param lcidPrefix only lcids starting with it (null: any lcid of the tenant)
 * @param leaseMs    the claimed lock's lease (null: 30000); short leases bound the delay after a lost claim answer
 * @param take       how many queued requests of the lcid to be handed at once (null: 1)
 * @param stop       runClaims only: true stops the poller (null: until interrupted). Looked at between claims, and
 *                   while a claim is in flight or waits to be retried, which it then ends at once; the holder loop
 *                   in hand runs to its end
 * @param onError    runClaims only: receives every handler error ({@link HandlerFailedException}, the handler's
 *                   error as its cause), lost lock ({@link LockLostException}) and failed claim or call (any other
 *                   {@link BatonException}); the poller goes on after each (null: a warning in the client's log)
 * @param onClaim    runClaims only: sees each claim's answer before its work is done (null: none); an error it
 *                   throws is handled like a handler's
 */
public record ClaimOptions(String lcidPrefix, Integer leaseMs, Integer take, BooleanSupplier stop,
                           Consumer<? super BatonException> onError, Consumer<? super Next> onClaim) {
    /** Without callbacks (the 1.1.0 constructor). */
    public ClaimOptions(String lcidPrefix, Integer leaseMs, Integer take, BooleanSupplier stop) {
        this(lcidPrefix, leaseMs, take, stop, null, null);
    }

    public static ClaimOptions defaults() {
        return new ClaimOptions(null, null, null, null, null, null);
    }

    public ClaimOptions lcidPrefix(String p) {
        return new ClaimOptions(p, leaseMs, take, stop, onError, onClaim);
    }

    public ClaimOptions leaseMs(Integer ms) {
        return new ClaimOptions(lcidPrefix, ms, take, stop, onError, onClaim);
    }

    public ClaimOptions take(Integer n) {
        return new ClaimOptions(lcidPrefix, leaseMs, n, stop, onError, onClaim);
    }

    public ClaimOptions stop(BooleanSupplier s) {
        return new ClaimOptions(lcidPrefix, leaseMs, take, s, onError, onClaim);
    }

    public ClaimOptions onError(Consumer<? super BatonException> c) {
        return new ClaimOptions(lcidPrefix, leaseMs, take, stop, c, onClaim);
    }

    public ClaimOptions onClaim(Consumer<? super Next> c) {
        return new ClaimOptions(lcidPrefix, leaseMs, take, stop, onError, c);
    }
}
