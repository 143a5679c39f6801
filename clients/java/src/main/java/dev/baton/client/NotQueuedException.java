package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;

/** 409 NOT_QUEUED: a withdrawal of a request that no longer waits; {@link #state()} says where it is. */
public class NotQueuedException extends BatonProblemException {
    public NotQueuedException(JsonNode body, int status, long retryAfterMs) {
        super(body, status, retryAfterMs);
    }
}
