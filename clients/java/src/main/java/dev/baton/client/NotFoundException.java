package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;

/** 404 NOT_FOUND: the request is unknown (never sent, or its record expired), or the path does not exist. */
public class NotFoundException extends BatonProblemException {
    public NotFoundException(JsonNode body, int status, long retryAfterMs) {
        super(body, status, retryAfterMs);
    }
}
