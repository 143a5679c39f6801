package dev.baton.api;

/** Body of POST /v1/locks/{lcid}/heartbeat. */
public record HeartbeatBody(String token, Long leaseMs) {
}
