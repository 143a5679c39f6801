package dev.baton.client;

import java.util.List;

/**
 * You hold the lock; work on the request(s) handed over: {@link #requests()} in FIFO order (one unless a
 * {@code take} above 1 was sent), all under the one {@link #fence()}.
 */
public record Next(String lcid, String token, long fence, long leaseMs, String expiresAt, WorkItem request,
                   List<WorkItem> requests) implements Outcome {
    public Next {
        requests = List.copyOf(requests);
    }

    @Override
    public String status() {
        return "NEXT";
    }

    @Override
    public String toString() { // never show the token
        return "Next[lcid=" + lcid + ", fence=" + fence + ", leaseMs=" + leaseMs + ", expiresAt=" + expiresAt
                + ", requests=" + requests + "]";
    }
}
