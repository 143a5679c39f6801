package dev.baton.client;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Wait mode: {@code awaitTurn} (a {@code wait} request long-polled until its turn, picked up live), {@code
 * awaitResult}, and {@code lockAll}, which takes a turn on each of several lcids. Turns are held with the
 * holder's {@link Holding}.
 */
final class Waits {
    private static final System.Logger LOG = System.getLogger("dev.baton.client");
    static final String WHO_RESCUES_WHAT = "docs/claims-and-dead-letters.md#who-rescues-what";

    private final Calls calls;
    private final Holder holder;
    private final Tracing tracing;

    Waits(Calls calls, Holder holder, Tracing tracing) {
        this.calls = calls;
        this.holder = holder;
        this.tracing = tracing;
    }

    /** {@link BatonClient#awaitTurn(String, String, Object, Integer, Duration, TraceContext)}. */
    Turn awaitTurn(String lcid, String requestId, Object payload, Integer leaseMs, Duration timeout, TraceContext trace) {
        long end = System.nanoTime() + timeout.toNanos();
        AcquireRequest base = AcquireRequest.of(requestId).payload(payload).leaseMs(leaseMs).mode(AcquireRequest.WAIT)
                .trace(trace);
        Stranded stranded = new Stranded(lcid, requestId);
        try {
            while (true) {
                long remainingMs = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
                if (remainingMs <= 0) {
                    break;
                }
                int waitMs = (int) Math.min(remainingMs, Calls.MAX_WAIT_MS);
                long sent = System.nanoTime();
                Outcome o = calls.acquireUntil(lcid, base.waitMs(waitMs), Math.max(end, calls.deadlineFor(0)));
                if (o instanceof Acquired a) {
                    return pickUp(lcid, requestId, a, sent);
                }
                if (!(o instanceof Queued)) {
                    // Raised, not withdrawn: the request keeps its place (clients/README.md, "A wait keeps its place").
                    throw new UnexpectedResponseException(200, "application/json", o.toString(),
                            "a wait request's acquire answers ACQUIRED or QUEUED");
                }
                stranded.look();
            }
        } catch (BatonTransportException e) {
            // The caller gave up (interruption): the one failure that withdraws. Any other failure of the call (a
            // 503 or transport error past the retry deadline, an unexpected answer) is raised as it is: the request
            // stays queued, awaitTurn with the same requestId waits on in the same place, and a turn nobody picks
            // up ends PICKUP_TIMEOUT.
            if (e.interrupted()) {
                cancelWait(lcid, requestId, "awaitTurn interrupted");
            }
            throw e;
        }
        cancelWait(lcid, requestId, "awaitTurn timed out");
        throw new BatonTimeoutException("no turn on " + lcid + " for " + requestId + " within " + timeout);
    }

    /**
     * The turn from its ACQUIRED answer, live. The service starts the turn's lease at the pick-up, somewhere
     * between the send of the call that picked it up and its answer; the client counts from that send (the first
     * attempt's, {@code sentNanos}). When more than a third of the lease has passed since (a long-poll held until the
     * turn came, a retry), it renews at once before returning the turn: counted from the send, the lease of a turn
     * that came after a long wait would already be over, and the turn cancelled before the caller saw it.
     */
    private Turn pickUp(String lcid, String requestId, Acquired a, long sentNanos) {
        long leaseNs = TimeUnit.MILLISECONDS.toNanos(a.leaseMs());
        long answeredAt = System.nanoTime();
        long from = sentNanos;
        long leaseMs = a.leaseMs();
        if (answeredAt - sentNanos > leaseNs / 3) {
            long renewSent = System.nanoTime();
            try {
                // Retried at most until the latest end the service's lease can have: the pick-up was no later than
                // the answer.
                Acquired renewed = calls.heartbeatUntil(lcid, a.token(), null, answeredAt + leaseNs);
                from = renewSent;
                leaseMs = renewed.leaseMs();
            } catch (LockLostException e) {
                LOG.log(System.Logger.Level.WARNING, "lock lost on " + lcid + ": the renewal of the turn of "
                        + requestId + " just picked up answered 409 LOCK_LOST (decided by the service)");
                throw e;
            }
        }
        Holding h = holder.hold(lcid, a.token(), leaseMs, from);
        return new Turn(calls, lcid, requestId, a.fence(), a.attempt(), h, a.traceparent(), a.tracestate());
    }

    /**
     * Work nobody holds is reported: after each long-poll that answered QUEUED the lock view is read; when two such
     * reads in a row find the lcid with no holder and requests queued, one warning for the wait. The wait goes on.
     */
    private final class Stranded {
        private final String lcid;
        private final String requestId;
        private int inARow;
        private boolean warned;

        Stranded(String lcid, String requestId) {
            this.lcid = lcid;
            this.requestId = requestId;
        }

        void look() {
            if (warned) {
                return;
            }
            LockView v;
            try {
                v = calls.lockUntil(lcid, System.nanoTime()); // one attempt: a hint, never a reason to wait
            } catch (BatonTransportException e) {
                if (e.interrupted()) {
                    throw e;
                }
                return;
            } catch (BatonException e) {
                return;
            }
            if (v.held() || v.queueLength() == 0) {
                inARow = 0;
                return;
            }
            if (++inARow >= 2) {
                warned = true;
                LOG.log(System.Logger.Level.WARNING, "the wait of " + requestId + " on " + lcid + " is behind work "
                        + "nobody holds: " + lcid + " has no holder and " + v.queueLength() + " request(s) queued, "
                        + "twice in a row. handoff requests (or a requeued one) ahead of a turn are done only by a "
                        + "claim poller or the next handoff acquire on the lcid: run a claim poller for these lcids "
                        + "(" + WHO_RESCUES_WHAT + "). The wait goes on.");
            }
        }
    }

    /** Withdraws a waiting request; if its turn was just granted, picks it up and aborts it. Best effort. */
    void cancelWait(String lcid, String requestId, String reason) {
        boolean interrupted = Thread.interrupted();
        try {
            calls.withdraw(lcid, requestId, reason);
        } catch (NotQueuedException e) {
            if ("ACTIVE".equals(e.state())) {
                try {
                    Outcome o = calls.acquire(lcid, AcquireRequest.of(requestId).mode(AcquireRequest.WAIT));
                    if (o instanceof Acquired a) {
                        calls.abort(lcid, a.token(), requestId, false, reason);
                    }
                } catch (BatonException ignored) {
                    // ACTIVE under another grant, or gone: nothing of ours to give back.
                }
            }
        } catch (BatonException e) {
            LOG.log(System.Logger.Level.DEBUG, "withdraw of " + lcid + "/" + requestId + " failed: " + e.getMessage());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@link BatonClient#awaitResult(String, String, Duration)}. */
    RequestView awaitResult(String lcid, String requestId, Duration timeout) {
        long end = System.nanoTime() + timeout.toNanos();
        while (true) {
            long remainingMs = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
            int waitMs = (int) Math.max(0, Math.min(remainingMs, Calls.MAX_WAIT_MS));
            RequestView v = calls.requestUntil(lcid, requestId, waitMs, Math.max(end, calls.deadlineFor(0)));
            if (v.ended()) {
                return v;
            }
            if (remainingMs <= 0) {
                throw new BatonTimeoutException(lcid + "/" + requestId + " still " + v.state() + " after " + timeout);
            }
        }
    }

    /** {@link BatonClient#lockAll(Collection, LockAllHandler, Integer, Duration, TraceContext)}. */
    <T> T lockAll(Collection<String> lcids, LockAllHandler<T> handler, Integer leaseMs, Duration timeout,
                  TraceContext trace) {
        List<String> order = lockOrder(lcids);
        long end = System.nanoTime() + timeout.toNanos();
        List<Turn> held = new ArrayList<>();
        try {
            for (String lcid : order) {
                Duration left = Duration.ofNanos(end - System.nanoTime());
                if (left.isNegative() || left.isZero()) {
                    throw new BatonTimeoutException("lockAll: no turn on " + lcid + " within " + timeout);
                }
                String rid = "lock-all-" + UUID.randomUUID();
                try {
                    held.add(awaitTurn(lcid, rid, null, leaseMs, left, trace));
                } catch (BatonTimeoutException e) {
                    throw e; // awaitTurn withdrew it
                } catch (RuntimeException e) {
                    // lockAll gives up as a whole on any failure: the wait that awaitTurn keeps after a failed call
                    // is withdrawn here (an interrupted awaitTurn withdrew it already).
                    if (!(e instanceof BatonTransportException t && t.interrupted())) {
                        cancelWait(lcid, rid, "lockAll failed: " + e.getMessage());
                    }
                    throw e;
                }
            }
            LockSet set = new LockSet(held);
            T result;
            List<WorkItem> turns = new ArrayList<>();
            for (Turn t : held) {
                turns.add(new WorkItem(t.requestId(), null, t.attempt(), t.traceparent, t.tracestate));
            }
            set.enter();
            try {
                List<Long> fences = new ArrayList<>();
                for (Turn t : held) {
                    fences.add(t.fence());
                }
                result = tracing.workAll(order, fences, turns, () -> handler.handle(set));
            } catch (RuntimeException e) {
                set.exit();
                if (set.isCancelled()) {
                    set.checkCancelled();
                }
                throw e;
            } catch (Exception e) {
                set.exit();
                set.checkCancelled();
                throw new HandlerFailedException(String.join(",", order), "lock-all", e);
            }
            set.exit();
            set.checkCancelled();
            for (int i = held.size() - 1; i >= 0; i--) {
                held.get(i).complete(null);
            }
            return result;
        } finally {
            for (int i = held.size() - 1; i >= 0; i--) {
                Turn t = held.get(i);
                if (!t.finished()) {
                    t.close(); // abort, no requeue
                }
            }
        }
    }

    /** Deduped and sorted by UTF-8 bytes (unsigned), the order every lockAll caller uses. */
    static List<String> lockOrder(Collection<String> lcids) {
        List<String> order = new ArrayList<>(new LinkedHashSet<>(lcids));
        order.sort((a, b) -> Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8)));
        return order;
    }
}
