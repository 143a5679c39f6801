package dev.baton.lock;

/** The life of a request: QUEUED -> ACTIVE -> DONE, or ABORTED, or DEAD after too many attempts. */
public enum RequestState {
    QUEUED, ACTIVE, DONE, ABORTED, DEAD
}
