package dev.baton.client;

/**
 * What a caller holds while the client keeps its lease alive: the lock of one lcid under one {@link #fence()},
 * and the cancellation that comes when the lock is lost. A {@link Work} (the holder loop's handler) and a
 * {@link Turn} (a wait-mode turn) are both held this way, so they are cancelled the same way. Only this package
 * makes them (the constructor is package-private); not {@code sealed}, because the holder part that defines it
 * must not name the wait part's Turn (clients/README.md, "How each client is built").
 */
public abstract class Held {
    private final String lcid;
    private final long fence;
    final Holding holding;

    Held(String lcid, long fence, Holding holding) {
        this.lcid = lcid;
        this.fence = fence;
        this.holding = holding;
    }

    public String lcid() {
        return lcid;
    }

    /** The fence of this grant or handoff (one per batch): pass it to your database. */
    public long fence() {
        return fence;
    }

    /**
     * True once the lock is lost (a heartbeat answered LOCK_LOST, or the holder's lease deadline passed
     * without a renewal). A handler's thread is interrupted at that moment too.
     */
    public boolean isCancelled() {
        return holding.isLost();
    }

    /** Throws {@link LockLostException} when cancelled: call it before each write. */
    public void checkCancelled() {
        if (holding.isLost()) {
            throw holding.lostException();
        }
    }

    /** Runs {@code action} (on a client thread) when the lock is lost. */
    public void onCancel(Runnable action) {
        holding.lostSignal().thenRun(action);
    }
}
