package dev.baton.api;

import com.fasterxml.jackson.databind.JsonNode;

/** Body of POST /v1/locks/{lcid}/complete; {@code take}: a wait holder asks for queued handoff requests. */
public record CompleteBody(String token, String requestId, JsonNode result, Integer take) {
}
