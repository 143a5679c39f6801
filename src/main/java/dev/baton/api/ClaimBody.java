package dev.baton.api;

/** Body of POST /v1/claims; may be omitted. {@code take}: how many queued requests to be handed at most. */
public record ClaimBody(Long leaseMs, Integer take) {
}
