package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;

/** 403 FORBIDDEN: a worker key on an operator call (dead letters, their retry, ...): use an admin key. */
public class ForbiddenException extends BatonProblemException {
    public ForbiddenException(JsonNode body, int status, long retryAfterMs) {
        super(body, status, retryAfterMs);
    }
}
