package dev.baton.api;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Body of POST /v1/locks/{lcid}/acquire; {@code mode} is handoff (default) or wait, {@code waitMs}
 * how long a wait request's call may be held until its turn, {@code take} how many queued handoff
 * requests a rescue of a stranded queue hands the caller.
 */
public record AcquireBody(String requestId, JsonNode payload, Long leaseMs, String mode, Long waitMs, Integer take) {
}
