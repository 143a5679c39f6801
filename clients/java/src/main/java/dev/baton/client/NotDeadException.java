package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;

/** 409 NOT_DEAD: a retry of a dead letter that is not DEAD (a repeated retry lands here too: treat it as done). */
public class NotDeadException extends BatonProblemException {
    public NotDeadException(JsonNode body, int status, long retryAfterMs) {
        super(body, status, retryAfterMs);
    }
}
