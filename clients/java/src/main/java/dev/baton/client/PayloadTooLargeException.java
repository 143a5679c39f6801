package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;

/** 413 PAYLOAD_TOO_LARGE: a payload or result over 64 KiB, or a body over 256 KiB. */
public class PayloadTooLargeException extends BatonProblemException {
    public PayloadTooLargeException(JsonNode body, int status, long retryAfterMs) {
        super(body, status, retryAfterMs);
    }
}
