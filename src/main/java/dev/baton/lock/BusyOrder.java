package dev.baton.lock;

import com.fasterxml.jackson.annotation.JsonValue;

/** How GET /v1/busy-locks orders the busy lcids. */
public enum BusyOrder {
    /** Longest held first: the holder that has had the lock longest, or work longest without one. */
    HELD,
    /** Longest queue first. */
    QUEUE;

    /** As the query parameter spells it. */
    @JsonValue
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
