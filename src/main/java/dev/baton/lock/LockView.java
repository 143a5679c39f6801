package dev.baton.lock;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * What anyone may see of an lcid's lock. Never the token. {@code activeRequestIds}: while held,
 * every request active under it (a batch), {@code activeRequestId} first; {@code heldForMs}: while
 * held, since its holder got the lock (handoffs keep the holder; absent for locks granted before
 * this was recorded).
 */
public record LockView(String lcid, boolean held, Long fence, String activeRequestId, long leaseRemainingMs,
        int queueLength, @JsonInclude(JsonInclude.Include.NON_NULL) List<String> activeRequestIds,
        @JsonInclude(JsonInclude.Include.NON_NULL) Long heldForMs) {
}
