package dev.baton.security;

/** A caller refused before anything else is looked at: no valid key, or a key without the right. */
public class AccessDenied extends RuntimeException {

    /** Why: the caller is not known ({@link #UNAUTHENTICATED}), or may not do this ({@link #FORBIDDEN}). */
    public enum Reason {
        UNAUTHENTICATED, FORBIDDEN
    }

    private final Reason reason;

    public AccessDenied(Reason reason, String detail) {
        super(detail, null, false, false);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
