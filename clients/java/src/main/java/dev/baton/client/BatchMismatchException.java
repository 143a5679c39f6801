package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;

/**
 * 409 BATCH_MISMATCH: a complete named other requests than the active batch. Nothing changed and the caller
 * still holds the lock: complete again naming {@link #activeRequestIds()}.
 */
public class BatchMismatchException extends BatonProblemException {
    public BatchMismatchException(JsonNode body, int status, long retryAfterMs) {
        super(body, status, retryAfterMs);
    }

    public List<String> activeRequestIds() {
        List<String> ids = new ArrayList<>();
        JsonNode n = body() == null ? null : body().get("activeRequestIds");
        if (n != null && n.isArray()) {
            n.forEach(e -> ids.add(e.asText()));
        }
        return ids;
    }
}
