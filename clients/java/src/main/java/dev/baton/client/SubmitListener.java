package dev.baton.client;

/**
 * {@link RunOptions#onSubmit}: told once that Baton stored the request, before any handler runs. A caller that must
 * not lose track of a request across its own crash journals it here.
 */
@FunctionalInterface
public interface SubmitListener {
    /**
     * @param lcid      the lcid
     * @param requestId the caller's request (also when the client generated it)
     * @param outcome   the acquire's answer: {@link Acquired}, {@link Next} or {@link Queued}; null when the acquire
     *                  was sent more than once and answered DUPLICATE_REQUEST (its first attempt stored the request,
     *                  and another holder took it since)
     * @throws Exception a failure is treated like a handler's: a lock this call holds is aborted with
     *                   {@code requeue: true}, and {@code run} throws {@link RunFailedException} with it as the cause
     */
    void onSubmit(String lcid, String requestId, Outcome outcome) throws Exception;
}
