package dev.baton.api;

import com.fasterxml.jackson.databind.JsonNode;

/** Body of POST /v1/locks/{lcid}/complete. */
public record CompleteBody(String token, String requestId, JsonNode result) {
}
