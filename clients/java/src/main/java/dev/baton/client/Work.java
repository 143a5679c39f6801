package dev.baton.client;

import java.util.List;

/**
 * What a {@link Handler} works on: the request(s) handed to the holder and their {@link #fence()}.
 * Pass the fence to your database and reject writes with a lower fence than the last accepted one.
 */
public final class Work extends Held {
    private final List<WorkItem> requests;

    Work(String lcid, long fence, List<WorkItem> requests, Holding holding) {
        super(lcid, fence, holding);
        this.requests = List.copyOf(requests);
    }

    /** The request(s) to work on, in FIFO order; more than one only with {@code take} above 1. */
    public List<WorkItem> requests() {
        return requests;
    }

    /** The first (with take 1, the only) request. */
    public WorkItem request() {
        return requests.get(0);
    }
}
