package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;

/**
 * The holder: {@code run} (submit, then the holder loop while this caller holds the lock) and the holder loop itself,
 * which the claim poller runs too. The lease and its heartbeat are {@link Holding}'s.
 */
final class Holder {
    private static final System.Logger LOG = System.getLogger("dev.baton.client");

    /** Run after a grant's holding started and before its first handler; a failure counts as the handler's. */
    @FunctionalInterface
    interface Hook {
        void run() throws Exception;
    }

    private final Calls calls;
    private final Executor executor;
    private final Tracing tracing;

    Holder(Calls calls, Executor executor, Tracing tracing) {
        this.calls = calls;
        this.executor = executor;
        this.tracing = tracing;
    }

    /** The holding of a grant sent at {@code sentNanos}, heartbeating from now on. */
    Holding hold(String lcid, String token, long leaseMs, long sentNanos) {
        return Holding.start(calls, executor, lcid, token, leaseMs, sentNanos);
    }

    /** {@link BatonClient#run(String, Handler, RunOptions)}. */
    RunReport run(String lcid, Handler handler, RunOptions o) {
        String rid = o.requestId();
        SubmitListener listener = o.onSubmit();
        AcquireRequest req = AcquireRequest.of(rid).payload(o.payload()).leaseMs(o.leaseMs()).take(o.take())
                .trace(o.trace());
        List<String> handled = new ArrayList<>();
        long sent = System.nanoTime();
        Outcome out;
        try {
            out = calls.acquire(lcid, req);
        } catch (DuplicateRequestException d) {
            if (d.attempts > 1 && ("ACTIVE".equals(d.state()) || "DONE".equals(d.state()))) {
                // An earlier attempt of this very call stored the request (its answer was lost to a timeout, a
                // dropped connection or a 503) and another holder took it since: stored, as QUEUED says.
                submitted(listener, lcid, rid, null, null);
                return new RunReport(lcid, "QUEUED", rid, null, List.of(), null, false);
            }
            throw failed(lcid, rid, null, handled, d, d.getMessage());
        } catch (RuntimeException e) {
            throw failed(lcid, rid, null, handled, e, e.getMessage());
        }
        if (out instanceof Queued q) {
            submitted(listener, lcid, rid, q, q.position());
            return new RunReport(lcid, "QUEUED", rid, q.position(), List.of(), null, false);
        }
        WorkItem own = out instanceof Acquired a
                ? new WorkItem(rid, Calls.toJson(o.payload()), a.attempt(), a.traceparent(), a.tracestate()) : null;
        Outcome grant = out;
        Hook hook = listener == null ? null : () -> listener.onSubmit(lcid, rid, grant);
        Released released;
        try {
            released = holdLoop(lcid, out, sent, own, o.take(), handler, handled, "onSubmit", hook);
        } catch (HandlerFailedException e) {
            throw failed(lcid, rid, null, handled, e.getCause(), e.getMessage());
        } catch (RuntimeException e) {
            throw failed(lcid, rid, null, handled, e, e.getMessage());
        }
        return new RunReport(lcid, "RELEASED", rid, null, handled, released, handled.contains(rid));
    }

    /** onSubmit of a request this call does not hold (QUEUED, or stored by an earlier attempt). */
    private static void submitted(SubmitListener listener, String lcid, String rid, Outcome outcome, Integer position) {
        if (listener == null) {
            return;
        }
        try {
            listener.onSubmit(lcid, rid, outcome);
        } catch (Exception e) {
            throw failed(lcid, rid, position, List.of(), e, "onSubmit failed: " + e);
        }
    }

    private static RunFailedException failed(String lcid, String rid, Integer position, List<String> handled,
                                              Throwable cause, String why) {
        RunReport report = new RunReport(lcid, "FAILED", rid, position, handled, null, handled.contains(rid));
        return new RunFailedException("run of " + rid + " on " + lcid + " failed: "
                + (why == null ? String.valueOf(cause) : why), cause, report);
    }

    /**
     * The holder loop from a grant (ACQUIRED of the caller's own request {@code own}, or NEXT) until RELEASED:
     * handler, complete, the next, ... Adds each completed requestId to {@code handled} and returns the RELEASED
     * answer. Throws {@link HandlerFailedException} (after aborting with requeue), {@link LockLostException} (the
     * service's or the client's decision; nothing completed for the lost work), or the failed call's error.
     * {@code beforeFirst} (null: none; named {@code hookName} in errors) runs once the holding started.
     */
    Released holdLoop(String lcid, Outcome first, long sentNanos, WorkItem own, Integer take, Handler handler,
                      List<String> handled, String hookName, Hook beforeFirst) {
        String token;
        long fence;
        long leaseMs;
        List<WorkItem> items;
        if (first instanceof Acquired a) {
            token = a.token();
            fence = a.fence();
            leaseMs = a.leaseMs();
            items = List.of(own != null ? own : new WorkItem(a.requestId(), null, a.attempt(), a.traceparent(),
                    a.tracestate()));
        } else if (first instanceof Next n) {
            token = n.token();
            fence = n.fence();
            leaseMs = n.leaseMs();
            items = n.requests();
        } else {
            throw new IllegalArgumentException("not a grant: " + first.status());
        }
        Holding h = hold(lcid, token, leaseMs, sentNanos);
        try {
            if (beforeFirst != null) {
                List<WorkItem> firstItems = items;
                step(h, lcid, firstItems, hookName, () -> {
                    beforeFirst.run();
                    return null;
                });
            }
            while (true) {
                Work work = new Work(lcid, fence, items, h);
                long f = fence;
                List<WorkItem> current = items;
                // The result is made JSON inside the step: one that cannot be is the handler's failure (aborted
                // with requeue), not a complete that never goes out.
                Object body = step(h, lcid, items, "handler", () -> {
                    Object result = tracing.work(lcid, f, current, () -> handler.handle(work));
                    return current.size() > 1 ? completions(current, result) : Calls.toJson(result);
                });
                if (!h.beginFinish()) {
                    throw h.lostException(); // never complete for a holder whose lease may have run out
                }
                long sent = System.nanoTime();
                Outcome next;
                try {
                    if (items.size() > 1) {
                        @SuppressWarnings("unchecked")
                        List<Completion> completed = (List<Completion>) body;
                        next = calls.complete(lcid, token, completed, take);
                    } else {
                        next = calls.complete(lcid, token, items.get(0).requestId(), body, take);
                    }
                } catch (LockLostException e) {
                    h.markLost("its complete answered 409 LOCK_LOST", e);
                    throw e;
                }
                for (WorkItem w : items) {
                    handled.add(w.requestId());
                }
                if (next instanceof Next n) {
                    fence = n.fence();
                    items = n.requests();
                    h.endFinish(sent, n.leaseMs());
                } else if (next instanceof Released r) {
                    return r;
                } else {
                    throw new UnexpectedResponseException(200, "application/json", next.toString(),
                            "a complete answers NEXT or RELEASED");
                }
            }
        } finally {
            h.stop();
        }
    }

    @FunctionalInterface
    private interface Step<T> {
        T call() throws Exception;
    }

    /**
     * Runs the caller's code (a handler, onSubmit, onClaim) while it holds {@code items}: its thread is interrupted
     * if the lock is lost meanwhile. A failure aborts the work with requeue and is thrown as
     * {@link HandlerFailedException}; a loss meanwhile is thrown as the loss.
     */
    private <T> T step(Holding h, String lcid, List<WorkItem> items, String what, Step<T> code) {
        T value;
        h.enterHandler();
        try {
            value = code.call();
        } catch (Throwable e) {
            h.exitHandler();
            if (h.isLost()) {
                throw h.lostException();
            }
            abortAfterFailure(h, items.get(0).requestId(), e);
            String rid = items.get(0).requestId();
            throw new HandlerFailedException(what + " failed on " + lcid + "/" + rid + ": " + e, lcid, rid, e);
        }
        h.exitHandler();
        return value;
    }

    private void abortAfterFailure(Holding h, String requestId, Throwable e) {
        boolean interrupted = Thread.interrupted(); // let the abort go out, then restore the flag
        try {
            if (h.beginFinish()) {
                calls.abort(h.lcid, h.token, requestId, true, Calls.reasonOf(e));
            }
        } catch (BatonException abortFailed) {
            // The lease will run out and the request come back with attempt + 1 all the same.
            LOG.log(System.Logger.Level.WARNING, "abort after a handler failure on " + h.lcid + " failed: "
                    + abortFailed.getMessage());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static List<Completion> completions(List<WorkItem> items, Object result) {
        List<Completion> out = new ArrayList<>();
        if (result instanceof JsonNode node && node.isObject()) {
            for (WorkItem w : items) {
                out.add(new Completion(w.requestId(), node.get(w.requestId())));
            }
            return out;
        }
        Map<?, ?> byId = result instanceof Map<?, ?> m ? m : Map.of();
        for (WorkItem w : items) {
            out.add(new Completion(w.requestId(), Calls.toJson(byId.get(w.requestId()))));
        }
        return out;
    }
}
