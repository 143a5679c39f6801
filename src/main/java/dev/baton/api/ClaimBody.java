package dev.baton.api;

/** Body of POST /v1/claims; may be omitted. */
public record ClaimBody(Long leaseMs) {
}
