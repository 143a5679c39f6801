package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;

/** 500 INTERNAL_ERROR. Retried by the client until its deadline. */
public class InternalErrorException extends BatonProblemException {
    public InternalErrorException(JsonNode body, int status, long retryAfterMs) {
        super(body, status, retryAfterMs);
    }
}
