package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Where one request stands.
 *
 * @param state    QUEUED, ACTIVE, DONE, ABORTED or DEAD
 * @param position only while QUEUED (1 = next), else null
 * @param fence    the fence of its last grant, null if it was never granted
 * @param result   the result it completed with (DONE), else null
 * @param reason   why it was last aborted, requeued or declared DEAD, else null
 * @param traceparent the W3C trace context it was submitted with, else null
 * @param tracestate  its tracestate, else null
 */
public record RequestView(String lcid, String requestId, String state, Integer position, int attempt, Long fence,
                          JsonNode result, String reason, String traceparent, String tracestate) {
    /** Without a trace context (the 1.1.0 constructor). */
    public RequestView(String lcid, String requestId, String state, Integer position, int attempt, Long fence,
                       JsonNode result, String reason) {
        this(lcid, requestId, state, position, attempt, fence, result, reason, null, null);
    }

    /** DONE, ABORTED or DEAD: nothing more will happen to it (unless an operator retries a DEAD one). */
    public boolean ended() {
        return "DONE".equals(state) || "ABORTED".equals(state) || "DEAD".equals(state);
    }
}
