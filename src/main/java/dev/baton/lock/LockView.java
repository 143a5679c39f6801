package dev.baton.lock;

/** What anyone may see of an lcid's lock. Never the token. */
public record LockView(String lcid, boolean held, Long fence, String activeRequestId, long leaseRemainingMs,
        int queueLength) {
}
