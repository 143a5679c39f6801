package dev.baton.client;

/**
 * The lock is busy; the request is stored at {@code position} (1 = next). A {@code handoff} request is done
 * by the holder: the caller may go away.
 */
public record Queued(String lcid, String requestId, int position, int queueLength) implements Outcome {
    @Override
    public String status() {
        return "QUEUED";
    }
}
