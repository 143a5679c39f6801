package dev.baton.api;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Body of POST /v1/locks/{lcid}/acquire; {@code mode} is handoff (default) or wait, {@code waitMs}
 * how long a wait request's call may be held until its turn.
 */
public record AcquireBody(String requestId, JsonNode payload, Long leaseMs, String mode, Long waitMs) {
}
