package dev.baton.client;

import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The retry loop over {@link Http}: every call is sent again with the same body after a connection error, a
 * timeout, 429, 500 or 503, with the backoff of {@link RetryPolicy} (never shorter than the answer's Retry-After),
 * until the caller's deadline; then the last error is thrown. Other 4xx answers and non-problem answers are never
 * retried. Safe because every Baton call is answered from what is stored.
 *
 * <p>Retrying is not silent: after the third failed attempt of one call it logs one warning for that call (method,
 * path, the service's host:port, the last error), never the key or the token.
 */
final class Retries {
    private static final System.Logger LOG = System.getLogger("dev.baton.client");
    /** The failed attempt after which a call says that it is retrying. */
    static final int WARN_AFTER = 3;
    /** How often a stoppable backoff sleep looks at its stop condition. */
    private static final long STOP_POLL_NS = TimeUnit.MILLISECONDS.toNanos(20);

    private final Http http;
    private final RetryPolicy policy;

    Retries(Http http, RetryPolicy policy) {
        this.http = http;
        this.policy = policy;
    }

    /** The deadline (nanoTime) of a call starting now: the policy's deadline, plus a long-poll's wait. */
    long deadlineFor(int waitMs) {
        return System.nanoTime() + policy.deadline().toNanos() + TimeUnit.MILLISECONDS.toNanos(waitMs);
    }

    /**
     * Sends the call, retrying until {@code deadline} (nanoTime). Returns a 2xx answer; throws the typed error
     * otherwise, with {@link BatonException#attempts} set. {@code stop} (null: never) ends the call at once, its
     * retries and its attempt in flight included, with {@link Stopped}.
     */
    Http.Resp exchange(String method, String path, String body, long deadline, long attemptTimeoutMs,
                       TraceContext trace, BooleanSupplier stop) {
        BatonException last = null;
        for (int attempt = 0; ; attempt++) {
            if (stop != null && stop.getAsBoolean()) {
                throw new Stopped(method + " " + path + ": stopped by the caller");
            }
            long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (attempt > 0 && remainingMs <= 0) {
                throw last;
            }
            // Each try is bounded by the time left (a heartbeat must not outlive the holder's deadline); the
            // first one is always made, with its full timeout when no deadline is left (RetryPolicy.NONE).
            long timeoutMs = attempt == 0 && remainingMs <= 0 ? attemptTimeoutMs
                    : Math.max(1, Math.min(attemptTimeoutMs, remainingMs));
            long retryAfterMs = 0;
            try {
                return http.send(method, path, body, timeoutMs, trace, stop);
            } catch (BatonException e) {
                e.attempts = attempt + 1;
                if (last != null && timeoutMs < attemptTimeoutMs && e instanceof BatonTransportException t
                        && (t.timedOut() || System.nanoTime() - deadline >= 0)) {
                    // An attempt cut short by the deadline says nothing new: the deadline is spent, and the last
                    // real answer (a 503, say) is the error to raise. The cut shows as a timeout, or, when the
                    // timer closes the connection while the answer is being read, as a closed connection.
                    last.attempts = attempt + 1;
                    throw last;
                }
                if (!retryable(e)) {
                    throw e;
                }
                last = e;
                if (e instanceof BatonProblemException p) {
                    retryAfterMs = p.retryAfterMs();
                }
            }
            long sleepMs = policy.backoffMs(attempt, retryAfterMs);
            long wakeAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(sleepMs);
            if (wakeAt >= deadline) {
                throw last; // the next try would start after the caller's deadline
            }
            if (attempt + 1 == WARN_AFTER) {
                LOG.log(System.Logger.Level.WARNING, method + " " + path + " to " + http.hostPort() + " failed "
                        + WARN_AFTER + " times, last: " + last.getMessage() + "; retrying until its deadline, in "
                        + String.format(Locale.ROOT, "%.1f s", (deadline - System.nanoTime()) / 1e9));
            }
            sleepUntil(wakeAt, stop, method, path);
        }
    }

    private static boolean retryable(BatonException e) {
        if (e instanceof BatonProblemException p) {
            return p.status() == 429 || p.status() == 500 || p.status() == 503;
        }
        return e instanceof BatonTransportException t && !t.interrupted();
    }

    private void sleepUntil(long wakeAt, BooleanSupplier stop, String method, String path) {
        try {
            while (true) {
                long left = wakeAt - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                if (stop == null) {
                    TimeUnit.NANOSECONDS.sleep(left);
                    return;
                }
                if (stop.getAsBoolean()) {
                    throw new Stopped(method + " " + path + ": stopped by the caller");
                }
                TimeUnit.NANOSECONDS.sleep(Math.min(left, STOP_POLL_NS));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BatonTransportException(method + " " + path + ": interrupted", e);
        }
    }
}
