package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;

/** 429 QUEUE_FULL: the lcid queue holds its bound; nothing was stored. Retried by the client until its deadline. */
public class QueueFullException extends BatonProblemException {
    public QueueFullException(JsonNode body, int status, long retryAfterMs) {
        super(body, status, retryAfterMs);
    }
}
