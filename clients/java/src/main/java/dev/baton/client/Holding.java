package dev.baton.client;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * One holding of a lock (one token): keeps the lease alive with heartbeats every lease/3 on a background
 * thread, and decides when the lock is lost.
 *
 * <p>The holder's deadline is the send time of its last successful renewal (the acquire, complete, claim or
 * heartbeat that gave it the lock or its current request) + the lease, on {@link System#nanoTime()}: not the
 * service's {@code expiresAt}, because the two clocks differ and a renewal answer may arrive late. When a
 * heartbeat answers LOCK_LOST, or the deadline passes without a renewal, the holding is lost: the handler
 * thread is interrupted, the cancellation signal fires, one warning is logged saying who decided, and the
 * client never completes for it.
 */
final class Holding {
    private static final System.Logger LOG = System.getLogger("dev.baton.client");
    private static final long RETRY_AFTER_FAILURE_NS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final String DEADLINE_PASSED = "no renewal before the holder's lease deadline";

    private final Calls calls;
    private final Executor executor;
    final String lcid;
    final String token;
    private long leaseMs;
    private long deadline;
    private boolean lost;
    private boolean stopped;
    private boolean finishing;
    private String lostWhy;
    private LockLostException serviceLoss; // the service's LOCK_LOST answer, when it decided
    private final HandlerInterrupt handlerInterrupt = new HandlerInterrupt();
    private final CompletableFuture<Void> lostSignal = new CompletableFuture<>();

    Holding(Calls calls, Executor executor, String lcid, String token, long leaseMs, long sentNanos) {
        this.calls = calls;
        this.executor = executor;
        this.lcid = lcid;
        this.token = token;
        this.leaseMs = leaseMs;
        this.deadline = sentNanos + TimeUnit.MILLISECONDS.toNanos(leaseMs);
    }

    /** Creates the holding of a grant sent at {@code sentNanos} and starts its heartbeats. */
    static Holding start(Calls calls, Executor executor, String lcid, String token, long leaseMs, long sentNanos) {
        Holding h = new Holding(calls, executor, lcid, token, leaseMs, sentNanos);
        executor.execute(h::loop);
        return h;
    }

    private long intervalNs() {
        return TimeUnit.MILLISECONDS.toNanos(Math.max(1, leaseMs / 3));
    }

    private void loop() {
        long nextBeat;
        synchronized (this) {
            nextBeat = deadline - TimeUnit.MILLISECONDS.toNanos(leaseMs) + intervalNs();
        }
        while (true) {
            long dl;
            synchronized (this) {
                while (true) {
                    if (stopped || lost) {
                        return;
                    }
                    long now = System.nanoTime();
                    if (finishing) {
                        // The holder's own complete/abort is in flight: it renews (or ends) the holding itself,
                        // and a heartbeat racing it could see LOCK_LOST for a lock that was simply released.
                        waitNs(intervalNs());
                        nextBeat = System.nanoTime() + intervalNs();
                        continue;
                    }
                    if (now >= deadline) {
                        markLostLocked(DEADLINE_PASSED, null);
                        return;
                    }
                    long wake = Math.min(nextBeat, deadline);
                    if (now >= wake) {
                        break;
                    }
                    waitNs(wake - now);
                }
                dl = deadline;
            }
            long sent = System.nanoTime();
            try {
                Acquired a = calls.heartbeatUntil(lcid, token, null, dl);
                renewed(sent, a.leaseMs());
                nextBeat = sent + intervalNs();
            } catch (LockLostException e) {
                synchronized (this) {
                    if (!finishing && !stopped) {
                        markLostLocked("a heartbeat answered 409 LOCK_LOST", e);
                        return;
                    }
                }
                nextBeat = System.nanoTime() + intervalNs();
            } catch (RuntimeException e) {
                // Could not renew in the time left (503s, timeouts): try again shortly, until the deadline decides.
                LOG.log(System.Logger.Level.DEBUG, "heartbeat on " + lcid + " failed: " + e.getMessage());
                nextBeat = System.nanoTime() + RETRY_AFTER_FAILURE_NS;
            }
        }
    }

    private void waitNs(long ns) {
        try {
            TimeUnit.NANOSECONDS.timedWait(this, Math.max(ns, 1_000));
        } catch (InterruptedException e) {
            stopped = true; // the client is closing
        }
    }

    /** A successful renewal sent at {@code sentNanos}: the deadline moves to sentNanos + lease. */
    synchronized void renewed(long sentNanos, long newLeaseMs) {
        this.leaseMs = newLeaseMs;
        this.deadline = Math.max(deadline, sentNanos + TimeUnit.MILLISECONDS.toNanos(newLeaseMs));
        notifyAll();
    }

    /** The service answered LOCK_LOST to one of the holder's own calls (its complete). */
    synchronized void markLost(String why, LockLostException answer) {
        markLostLocked(why, answer);
    }

    private void markLostLocked(String why, LockLostException answer) {
        if (lost) {
            return;
        }
        lost = true;
        lostWhy = why;
        serviceLoss = answer;
        LOG.log(System.Logger.Level.WARNING, answer != null
                ? "lock lost on " + lcid + ": " + why + " (decided by the service); the work is cancelled"
                : "lock lost on " + lcid + ", decided by this client: " + why
                        + " (no LOCK_LOST answer: the service was not heard in time); the work is cancelled");
        handlerInterrupt.fire();
        notifyAll();
        try {
            // Listeners run on a client thread, never under this holding's monitor.
            executor.execute(() -> lostSignal.complete(null));
        } catch (RejectedExecutionException closing) {
            lostSignal.complete(null);
        }
    }

    synchronized boolean isLost() {
        if (!lost && !finishing && !stopped && System.nanoTime() >= deadline) {
            markLostLocked(DEADLINE_PASSED, null);
        }
        return lost;
    }

    /** The loss as an error to throw: the service's LOCK_LOST, or the client's own decision. */
    LockLostException lostException() {
        synchronized (this) {
            if (serviceLoss != null) {
                return serviceLoss.again();
            }
            return LockLostException.byClient(lcid, lostWhy == null ? DEADLINE_PASSED : lostWhy);
        }
    }

    CompletableFuture<Void> lostSignal() {
        return lostSignal;
    }

    /** The calling thread runs the handler now: it is interrupted if the lock is lost meanwhile. */
    void enterHandler() {
        handlerInterrupt.enter();
    }

    /** The handler returned: no more interrupts; clear the one this holding delivered, if any. */
    void exitHandler() {
        handlerInterrupt.exit();
    }

    /**
     * The holder is about to complete or abort: heartbeats pause. Returns false (and marks the holding lost)
     * when the deadline has already passed: then the client must not complete.
     */
    synchronized boolean beginFinish() {
        if (isLost()) {
            return false;
        }
        finishing = true;
        return true;
    }

    /** The complete answered NEXT (sent at {@code sentNanos}): heartbeats go on for the new request(s). */
    synchronized void endFinish(long sentNanos, long newLeaseMs) {
        finishing = false;
        renewed(sentNanos, newLeaseMs);
    }

    synchronized void stop() {
        stopped = true;
        notifyAll();
    }
}
