package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One request to work on.
 *
 * @param requestId the request's name (its idempotency key)
 * @param payload   the JSON it was submitted with, or null when it had none
 * @param attempt   1 at first, + 1 each time it was requeued (lease ran out, or a handler failed)
 * @param traceparent the W3C trace context it was submitted with, or null: link the span of the work to it
 * @param tracestate  its tracestate, or null
 */
public record WorkItem(String requestId, JsonNode payload, int attempt, String traceparent, String tracestate) {
    /** Without a trace context (the 1.1.0 constructor). */
    public WorkItem(String requestId, JsonNode payload, int attempt) {
        this(requestId, payload, attempt, null, null);
    }
}
