package dev.baton.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The continuous claim poller: claims; on work runs the holder loop on that lcid and claims again at once; on 204
 * sleeps a random 200 ms to 1 s and claims again, until stopped. It never stops at an empty claim: work becomes
 * claimable later than the call that orphaned it (docs/claims-and-dead-letters.md).
 */
final class Claims {
    private static final System.Logger LOG = System.getLogger("dev.baton.client");
    private static final long STOP_POLL_NS = TimeUnit.MILLISECONDS.toNanos(20);

    private final Calls calls;
    private final Holder holder;

    Claims(Calls calls, Holder holder) {
        this.calls = calls;
        this.holder = holder;
    }

    /** {@link BatonClient#runClaims(Handler, ClaimOptions)}. */
    ClaimReport run(Handler handler, ClaimOptions o) {
        BooleanSupplier stop = () -> stopRequested(o);
        Consumer<? super BatonException> onError = o.onError() != null ? o.onError()
                : e -> LOG.log(System.Logger.Level.WARNING, "claim poller: " + e.getMessage());
        long claims = 0;
        long empty = 0;
        long failed = 0;
        List<String> handled = new ArrayList<>();
        while (!stop.getAsBoolean()) {
            Optional<Next> claimed;
            long sent = System.nanoTime();
            try {
                // Stoppable: a poller stopped during an outage does not wait out this claim's retry deadline.
                claimed = calls.claim(o, stop);
            } catch (Stopped s) {
                break;
            } catch (BatonException e) {
                if (e instanceof BatonTransportException t && t.interrupted()) {
                    break;
                }
                failed++;
                tell(onError, e);
                if (!idle(stop)) {
                    break;
                }
                continue;
            }
            if (claimed.isEmpty()) {
                empty++;
                if (!idle(stop)) {
                    break;
                }
                continue;
            }
            claims++;
            Next next = claimed.get();
            Consumer<? super Next> onClaim = o.onClaim();
            Holder.Hook hook = onClaim == null ? null : () -> onClaim.accept(next);
            try {
                // The holder loop in hand runs to its end: a stop is looked at again once it returns.
                holder.holdLoop(next.lcid(), next, sent, null, o.take(), handler, handled, "onClaim", hook);
            } catch (BatonException e) {
                failed++;
                tell(onError, e);
                if (e instanceof BatonTransportException t && t.interrupted()) {
                    break;
                }
            }
        }
        return new ClaimReport(claims, empty, handled.size(), failed);
    }

    /** Passes an error on; the poller goes on whatever the callback does. */
    private static void tell(Consumer<? super BatonException> onError, BatonException e) {
        try {
            onError.accept(e);
        } catch (RuntimeException callbackFailed) {
            LOG.log(System.Logger.Level.WARNING, "claim poller: onError threw " + callbackFailed + " for: "
                    + e.getMessage());
        }
    }

    private static boolean stopRequested(ClaimOptions o) {
        return Thread.currentThread().isInterrupted() || (o.stop() != null && o.stop().getAsBoolean());
    }

    /** Sleeps 200..1000 ms in short slices (so that a stop is seen soon); false when stopped meanwhile. */
    private static boolean idle(BooleanSupplier stop) {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ThreadLocalRandom.current().nextLong(200, 1001));
        try {
            while (true) {
                if (stop.getAsBoolean()) {
                    return false;
                }
                long left = until - System.nanoTime();
                if (left <= 0) {
                    return true;
                }
                TimeUnit.NANOSECONDS.sleep(Math.min(left, STOP_POLL_NS));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
