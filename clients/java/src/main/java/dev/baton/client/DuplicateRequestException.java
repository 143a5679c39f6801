package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * 409 DUPLICATE_REQUEST: the requestId is known and neither waiting nor granted to this call (ACTIVE under
 * another holder, DONE, ABORTED, DEAD); read {@link #state()} and {@link #result()}. The work needs nothing
 * more from you; new work needs a new requestId.
 */
public class DuplicateRequestException extends BatonProblemException {
    public DuplicateRequestException(JsonNode body, int status, long retryAfterMs) {
        super(body, status, retryAfterMs);
    }

    /** The request's result when it is DONE with one, else null. */
    public JsonNode result() {
        JsonNode n = body() == null ? null : body().get("result");
        return n == null || n.isNull() ? null : n;
    }
}
