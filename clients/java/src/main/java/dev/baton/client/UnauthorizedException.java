package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;

/** 401 UNAUTHORIZED: no or an unknown API key. */
public class UnauthorizedException extends BatonProblemException {
    public UnauthorizedException(JsonNode body, int status, long retryAfterMs) {
        super(body, status, retryAfterMs);
    }
}
