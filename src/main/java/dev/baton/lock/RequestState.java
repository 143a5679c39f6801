package dev.baton.lock;

/** The life of a request: QUEUED -> ACTIVE -> DONE, or ABORTED, or DEAD after too many attempts. */
public enum RequestState {
    QUEUED, ACTIVE, DONE, ABORTED, DEAD;

    /** DONE, ABORTED or DEAD: nothing more will happen to the request (until an operator's retry). */
    public boolean ended() {
        return this == DONE || this == ABORTED || this == DEAD;
    }
}
