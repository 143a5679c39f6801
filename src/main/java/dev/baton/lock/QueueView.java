package dev.baton.lock;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;

/**
 * A page of an lcid's queue as an operator sees it (GET /v1/locks/{lcid}/queue), head first:
 * {@code queueLength} is the whole queue's, {@code offset} where the page starts (from 0). The
 * requests under the lock are not queued; the lock view names them.
 */
public record QueueView(String lcid, int queueLength, int offset, List<QueuedRequest> items) {

    /**
     * One queued request: {@code position} from 1, as the acquire answered it; {@code queuedForMs}
     * since it last joined the queue (a requeued request rejoins it); {@code reason} why it was
     * requeued, if it was; {@code payload} only when asked for.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record QueuedRequest(String requestId, int position, RequestState state, int attempt, String mode,
            Long queuedForMs, String reason, @JsonRawValue String payload) {
    }
}
