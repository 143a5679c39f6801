package dev.baton.client;

/**
 * {@link BatonClient#run} failed; {@link #getCause()} is the original error and {@link #report()} what the run did
 * until then (what it handled and completed, in order).
 *
 * <ul>
 * <li>The handler threw: the cause is what it threw. The client aborted the request (the whole batch) with
 * {@code requeue: true} and the error's message as the reason: it is back at the head of its lcid with no holder,
 * and a claim poller (or the next acquire on that lcid) does it; the service dead-letters it after maxAttempts.</li>
 * <li>The lock was lost: the cause is a {@link LockLostException} (its {@code byClient()} tells who decided);
 * nothing was completed for the lost work.</li>
 * <li>A call failed after its retries (or its thread was interrupted): the cause is that {@link BatonException},
 * for example the acquire's {@link DuplicateRequestException} when the requestId was used before.</li>
 * </ul>
 */
public class RunFailedException extends BatonException {
    private final transient RunReport report;

    public RunFailedException(String message, Throwable cause, RunReport report) {
        super(message, cause);
        this.report = report;
    }

    /** What the run did until it failed: status FAILED, {@code handled}, {@code handledOwn}, {@code requestId}. */
    public RunReport report() {
        return report;
    }
}
