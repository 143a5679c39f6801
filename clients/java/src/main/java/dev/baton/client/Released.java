package dev.baton.client;

/**
 * Nothing more for you: the lock is free, or it was passed to a {@code wait} request ({@code passedTo}), or
 * your request left the queue.
 *
 * @param pending  requests still QUEUED on the lcid (a request the lock was passed to not counted); 0 when absent
 * @param passedTo the {@code wait} request the lock was passed to, or null
 */
public record Released(String lcid, int pending, String passedTo) implements Outcome {
    @Override
    public String status() {
        return "RELEASED";
    }
}
