package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;

/** 400 INVALID_REQUEST: the input breaks a rule ({@link #field()} names it); nothing was stored. Never retried. */
public class InvalidRequestException extends BatonProblemException {
    public InvalidRequestException(JsonNode body, int status, long retryAfterMs) {
        super(body, status, retryAfterMs);
    }
}
