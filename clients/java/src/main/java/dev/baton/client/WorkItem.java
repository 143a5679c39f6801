package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One request to work on.
 *
 * @param requestId the request's name (its idempotency key)
 * @param payload   the JSON it was submitted with, or null when it had none
 * @param attempt   1 at first, + 1 each time it was requeued (lease ran out, or a handler failed)
 */
public record WorkItem(String requestId, JsonNode payload, int attempt) {
}
