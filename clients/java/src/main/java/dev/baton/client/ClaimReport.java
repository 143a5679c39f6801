package dev.baton.client;

/**
 * What {@link BatonClient#runClaims} did until it was stopped.
 *
 * @param claims     claims answered NEXT
 * @param emptyPolls claims answered 204 (no orphaned work)
 * @param handled    requests handled and completed
 * @param failures   holder loops that ended with an error (handler error, lock lost, a call that failed)
 */
public record ClaimReport(long claims, long emptyPolls, long handled, long failures) {
}
