package dev.baton.api;

/**
 * Body of POST /v1/claims; may be omitted. {@code take}: how many queued requests to be handed at
 * most; {@code lcidPrefix}: only lcids that start with it, so that claim workers can split a
 * tenant's work by kind.
 */
public record ClaimBody(Long leaseMs, Integer take, String lcidPrefix) {
}
