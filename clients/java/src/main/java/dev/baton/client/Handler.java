package dev.baton.client;

/**
 * The work a holder does. Called with the request(s) handed to the holder and their fence.
 *
 * <p>Return the result (any JSON-serializable value, a JsonNode, or null for none). For a batch of more than
 * one request return a {@code Map<String, ?>} from requestId to result (a missing key = no result).
 *
 * <p>Throwing aborts the request with {@code requeue: true} and the error's message as the reason: it goes back to
 * the head of its lcid with no holder, and a claim poller (or the next acquire on that lcid) does it; the service
 * dead-letters it after maxAttempts. When the lock is lost the calling thread is interrupted and
 * {@link Work#isCancelled()} turns true: stop, and do not write any more with that fence.
 */
@FunctionalInterface
public interface Handler {
    Object handle(Work work) throws Exception;
}
