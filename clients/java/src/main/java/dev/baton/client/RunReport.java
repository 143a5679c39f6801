package dev.baton.client;

import java.util.List;

/**
 * What {@link BatonClient#run} did; {@link RunFailedException#report()} when it failed.
 *
 * @param lcid       the lcid
 * @param status     QUEUED (the request is stored; another holder or a claim poller does it), RELEASED (this call
 *                   held the lock until it had nothing more to do), or FAILED in the report of a failed run
 * @param requestId  this caller's request, also when the client generated it
 * @param position   while QUEUED, the request's position (1 = next) when known; else null
 * @param handled    the requestIds this call's handler ran for and completed, in order
 * @param released   the RELEASED answer that ended the holding (its {@code passedTo}, {@code pending}); else null
 * @param handledOwn true only when this caller's own request is among {@code handled}. RELEASED does not mean the
 *                   own request was done: the lock can pass to a {@code wait} request queued ahead of it, and the
 *                   request is then done later by the next holder of the lcid or a claim poller
 *                   ({@link BatonClient#awaitResult} tells when)
 */
public record RunReport(String lcid, String status, String requestId, Integer position, List<String> handled,
                        Released released, boolean handledOwn) {
    public RunReport {
        handled = List.copyOf(handled);
    }

    /** The 1.1.0 constructor: no requestId, no RELEASED answer, handledOwn false. */
    public RunReport(String lcid, String status, Integer position, List<String> handled) {
        this(lcid, status, null, position, handled, null, false);
    }
}
