package dev.baton.api;

/** Body of POST /v1/locks/{lcid}/abort. No token: a waiter withdraws its queued request. */
public record AbortBody(String requestId, String token, Boolean requeue, String reason) {
}
