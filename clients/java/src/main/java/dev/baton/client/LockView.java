package dev.baton.client;

import java.util.List;

/**
 * What anyone of the tenant may see of an lcid's lock (never its token).
 *
 * @param fence            while held the holder's fence, else the last one handed out; null when none is known
 * @param activeRequestId  while held, the active request (the first of a batch); else null
 * @param activeRequestIds while held, every request active under the lock; else empty
 * @param heldForMs        while held, since the grant that gave the holder its token; else null
 */
public record LockView(String lcid, boolean held, Long fence, String activeRequestId, List<String> activeRequestIds,
                       Long heldForMs, long leaseRemainingMs, int queueLength) {
    public LockView {
        activeRequestIds = activeRequestIds == null ? List.of() : List.copyOf(activeRequestIds);
    }
}
