package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;

/** A DEAD request, as the dead letters list it (an operator call: admin key). */
public record DeadLetter(String lcid, String requestId, int attempts, String reason, JsonNode payload, String diedAt) {
}
