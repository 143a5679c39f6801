package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;

/** 503 BACKEND_UNAVAILABLE: Redis down, slow or refusing. Retried by the client until its deadline. */
public class BackendUnavailableException extends BatonProblemException {
    public BackendUnavailableException(JsonNode body, int status, long retryAfterMs) {
        super(body, status, retryAfterMs);
    }
}
