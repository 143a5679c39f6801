package dev.baton.api;

import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;

import dev.baton.lock.RequestRules;

/**
 * Body of POST /v1/locks/{lcid}/complete: one request ({@code requestId}, {@code result}) or a
 * whole batch ({@code completed}); {@code take}: how many queued handoff requests the holder takes
 * next (a wait holder takes none unless it says).
 */
public record CompleteBody(String token, String requestId, JsonNode result, List<Completed> completed, Integer take) {

    /** One request of a completed batch. */
    public record Completed(String requestId, JsonNode result) implements RequestRules.Completion {
    }
}
