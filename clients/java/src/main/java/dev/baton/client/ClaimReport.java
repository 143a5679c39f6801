package dev.baton.client;

/**
 * What {@link BatonClient#runClaims} did until it was stopped.
 *
 * @param claims     claims answered with work (NEXT)
 * @param emptyPolls claims answered 204 (no orphaned work)
 * @param handled    requests handled and completed
 * @param failed     errors passed to {@link ClaimOptions#onError()} (handler errors, lost locks, failed claims and
 *                   calls)
 */
public record ClaimReport(long claims, long emptyPolls, long handled, long failed) {
    /** The 1.1.0 name of {@link #failed()}. */
    @Deprecated
    public long failures() {
        return failed;
    }
}
