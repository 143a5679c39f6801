package dev.baton.redis;

import java.time.Duration;

/**
 * The primary ran the change but fewer replicas than baton.backend.replicas-acked confirmed it
 * in time: not acknowledged (503, retry), because a failover now could lose it.
 */
public class ReplicasNotAckedException extends BackendUnavailableException {
    public ReplicasNotAckedException(long acked, int wanted, Duration timeout) {
        super("only " + acked + " of " + wanted + " replicas confirmed the write within " + timeout.toMillis()
                + " ms (baton.backend.replicas-acked)", null);
    }
}
