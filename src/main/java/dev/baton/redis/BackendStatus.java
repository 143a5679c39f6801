package dev.baton.redis;

import java.util.concurrent.atomic.AtomicLong;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.logging.Logger;

/**
 * Whether Redis answers: one WARN when a script call finds it gone and one INFO at the first answer
 * to any call after that ({@link SharedConnections}), however many calls failed in between (they are
 * counted in baton_rejected_total), so an outage is two lines in the log, not one per request.
 */
@ApplicationScoped
public class BackendStatus {

    private static final Logger LOG = Logger.getLogger(BackendStatus.class);

    /** When the first failure of the current outage was seen (epoch ms), 0 while Redis answers. */
    private final AtomicLong downSince = new AtomicLong();

    void unavailable(Throwable cause) {
        if (downSince.compareAndSet(0, System.currentTimeMillis())) {
            LOG.warnf("Redis unavailable: %s. Calls are answered 503 with Retry-After until it answers again.",
                    cause.getMessage());
        }
    }

    /** On every answer: one volatile read while Redis is up. */
    void answered() {
        long since = downSince.get();
        if (since != 0 && downSince.compareAndSet(since, 0)) {
            LOG.infof("Redis answers again, after %d ms unavailable", System.currentTimeMillis() - since);
        }
    }
}
