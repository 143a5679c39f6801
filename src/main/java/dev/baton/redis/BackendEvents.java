package dev.baton.redis;

/** What the backend layer reports for metrics; implemented in ops. */
public interface BackendEvents {

    /** A write was not confirmed by enough replicas in time, and its answer became a 503. */
    void replicasMissing();
}
