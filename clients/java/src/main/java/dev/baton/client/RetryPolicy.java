package dev.baton.client;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How calls are retried after a connection error, a timeout, 429, 500 or 503: exponential backoff with full
 * jitter (a random sleep between 0 and min(cap, base x 2^attempt)), never shorter than the answer's
 * {@code Retry-After}, until {@code deadline} has passed since the call started; then the last error is
 * thrown. Safe because every Baton call is answered from what is stored (same body, same answer).
 *
 * @param base     the first backoff ceiling (default 100 ms)
 * @param cap      the largest backoff ceiling (default 5 s)
 * @param deadline how long one call may keep retrying (default 30 s)
 */
public record RetryPolicy(Duration base, Duration cap, Duration deadline) {
    /** base 100 ms, cap 5 s, deadline 30 s. */
    public static final RetryPolicy DEFAULT = new RetryPolicy(Duration.ofMillis(100), Duration.ofSeconds(5),
            Duration.ofSeconds(30));

    /** Never retry: the first error is thrown. */
    public static final RetryPolicy NONE = new RetryPolicy(Duration.ZERO, Duration.ZERO, Duration.ZERO);

    public RetryPolicy {
        if (base.isNegative() || cap.isNegative() || deadline.isNegative()) {
            throw new IllegalArgumentException("durations must not be negative");
        }
    }

    /** The same policy with another deadline. */
    public RetryPolicy withDeadline(Duration d) {
        return new RetryPolicy(base, cap, d);
    }

    /**
     * The sleep before retry number {@code attempt} (0 = the first retry), in ms.
     *
     * @param retryAfterMs the answer's Retry-After in ms (0 when none): the sleep is never shorter
     */
    public long backoffMs(int attempt, long retryAfterMs) {
        long ceiling = Math.min(cap.toMillis(), base.toMillis() * (1L << Math.min(attempt, 30)));
        long jitter = ceiling <= 0 ? 0 : ThreadLocalRandom.current().nextLong(ceiling + 1);
        return Math.max(jitter, retryAfterMs);
    }
}
