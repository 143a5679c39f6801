package dev.baton.client;

/**
 * One entry of a batch complete ({@code completed}): the request and its result (any JSON-serializable
 * value, a {@link com.fasterxml.jackson.databind.JsonNode}, or null for none).
 */
public record Completion(String requestId, Object result) {
}
