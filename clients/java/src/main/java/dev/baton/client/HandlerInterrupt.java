package dev.baton.client;

/**
 * Interrupts the thread that runs a handler when its lock is lost, and only while it runs it: an interrupt
 * delivered after the handler returned would hit whatever the thread does next, so {@link #exit} clears it.
 * Holds no other monitor, so callers may fire it under their own.
 */
final class HandlerInterrupt {
    private Thread thread;
    private boolean fired;

    /** The calling thread runs the handler now; it is interrupted at once if the lock was already lost. */
    synchronized void enter() {
        thread = Thread.currentThread();
        if (fired) {
            thread.interrupt();
        }
    }

    /** The handler returned: no more interrupts; clears the one delivered, if any. */
    void exit() {
        boolean wasFired;
        synchronized (this) {
            thread = null;
            wasFired = fired;
        }
        if (wasFired) {
            Thread.interrupted();
        }
    }

    /** The lock is lost: interrupts the handler's thread if one runs (and any that enters later). */
    synchronized void fire() {
        fired = true;
        if (thread != null) {
            thread.interrupt();
        }
    }
}
