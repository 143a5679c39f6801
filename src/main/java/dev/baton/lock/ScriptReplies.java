package dev.baton.lock;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import dev.baton.redis.IndexStore;
import dev.baton.redis.Reply;

/**
 * Turns the reply arrays of the Lua scripts into outcomes, or into the problem a script
 * answered. The first element of every reply names what happened; lua/*.lua document the rest.
 */
final class ScriptReplies {

    private ScriptReplies() {
    }

    static Outcome outcome(String lcid, String requestId, Reply reply) {
        String tag = text(reply, 0);
        switch (tag) {
            case "ACQUIRED":
                String attempt = text(reply, 8);
                return new Outcome.Acquired(lcid, text(reply, 5), text(reply, 1), number(reply, 2),
                        number(reply, 4), Instant.ofEpochMilli(number(reply, 3)),
                        attempt == null ? null : Integer.valueOf(attempt), text(reply, 6), text(reply, 7));
            case "NEXT":
                List<Outcome.WorkItem> requests = workItems(reply.array(8));
                return new Outcome.Next(lcid, text(reply, 1), number(reply, 2), number(reply, 4),
                        Instant.ofEpochMilli(number(reply, 3)), requests.get(0), requests);
            case "QUEUED":
                return new Outcome.Queued(lcid, requestId, (int) number(reply, 1), (int) number(reply, 2));
            case "RELEASED":
                return new Outcome.Released(lcid, (int) number(reply, 1), text(reply, 2));
            default:
                throw problem(tag, lcid, requestId, reply);
        }
    }

    /** The { requestId, attempt, payload, traceparent, tracestate } entries of a NEXT reply's batch. */
    private static List<Outcome.WorkItem> workItems(Reply items) {
        List<Outcome.WorkItem> list = new ArrayList<>(items.size());
        for (int i = 0; i < items.size(); i++) {
            Reply item = items.array(i);
            list.add(new Outcome.WorkItem(item.text(0), item.text(2), (int) item.number(1), item.text(3),
                    item.text(4)));
        }
        return List.copyOf(list);
    }

    static LockView lockView(String lcid, Reply reply) {
        String fence = text(reply, 1);
        String heldFor = text(reply, 6);
        return new LockView(lcid, number(reply, 0) == 1, fence == null ? null : Long.parseLong(fence),
                text(reply, 2), number(reply, 3), (int) number(reply, 4), texts(reply.array(5)),
                heldFor == null ? null : Long.valueOf(heldFor));
    }

    private static List<String> texts(Reply array) {
        if (array == null) {
            return null;
        }
        List<String> list = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            list.add(array.text(i));
        }
        return List.copyOf(list);
    }

    static RequestView requestView(String lcid, String requestId, Reply reply) {
        String tag = text(reply, 0);
        if (!"REQUEST".equals(tag)) {
            throw problem(tag, lcid, requestId, reply);
        }
        String position = text(reply, 3);
        String fence = text(reply, 4);
        return new RequestView(lcid, requestId, RequestState.valueOf(text(reply, 1)),
                position == null ? null : Integer.valueOf(position), (int) number(reply, 2),
                fence == null ? null : Long.valueOf(fence), text(reply, 5), text(reply, 6), text(reply, 7),
                text(reply, 8));
    }

    /** lua/view_queue.lua's page, starting at {@code offset}. */
    static QueueView queueView(String lcid, int offset, Reply reply) {
        long now = Long.parseLong(text(reply, 1));
        Reply items = reply.array(2);
        List<QueueView.QueuedRequest> list = new ArrayList<>(items.size());
        for (int i = 0; i < items.size(); i++) {
            Reply item = items.array(i);
            String queuedAt = item.text(4);
            list.add(new QueueView.QueuedRequest(item.text(0), offset + i + 1, RequestState.valueOf(item.text(1)),
                    (int) item.number(2), "w".equals(item.text(3)) ? "wait" : "handoff",
                    queuedAt == null ? null : Math.max(0, now - Long.parseLong(queuedAt)), item.text(5),
                    item.text(6)));
        }
        return new QueueView(lcid, (int) number(reply, 0), offset, List.copyOf(list));
    }

    /** What the claim script found on one lcid. */
    static ClaimAnswer claim(String lcid, Reply reply) {
        String tag = text(reply, 0);
        switch (tag) {
            case "NEXT":
                return new ClaimAnswer.Claimed((Outcome.Next) outcome(lcid, null, reply));
            case "BUSY":
                return new ClaimAnswer.Busy(number(reply, 1), Long.parseLong(text(reply, 2)));
            case "CLAIMABLE":
                return new ClaimAnswer.Claimable();
            case "IDLE":
                return new ClaimAnswer.Idle(Long.parseLong(text(reply, 1)));
            default:
                throw new IllegalStateException("unexpected claim reply " + tag);
        }
    }

    /** One DEAD request with its payload, or null when it is no longer DEAD. */
    static DeadLetter deadLetter(IndexStore.DeadEntry entry, Reply reply) {
        if (!"DEAD".equals(text(reply, 0))) {
            return null;
        }
        return new DeadLetter(entry.lcid(), entry.requestId(), (int) number(reply, 1), text(reply, 2), text(reply, 3),
                Instant.ofEpochMilli(entry.diedAt()));
    }

    private static LockProblem problem(String tag, String lcid, String requestId, Reply reply) {
        switch (tag) {
            case "LOCK_LOST":
                return LockProblem.of(ProblemCode.LOCK_LOST,
                        "the token is not the live holder's for this request on " + lcid
                                + " (lease ran out, lock handed on, or wrong requestId)");
            case "QUEUE_FULL":
                return LockProblem.of(ProblemCode.QUEUE_FULL,
                        "the queue of " + lcid + " holds " + number(reply, 1) + " requests, its limit");
            case "DUPLICATE_REQUEST":
                return LockProblem.aboutRequest(ProblemCode.DUPLICATE_REQUEST,
                        "request " + requestId + " is already known on " + lcid + " and is " + text(reply, 1),
                        text(reply, 1), (int) number(reply, 2), text(reply, 3));
            case "NOT_QUEUED":
                return LockProblem.aboutRequest(ProblemCode.NOT_QUEUED,
                        "request " + requestId + " no longer waits on " + lcid + ": it is " + text(reply, 1),
                        text(reply, 1), (int) number(reply, 2), null);
            case "BATCH_MISMATCH":
                return LockProblem.batchMismatch("the requests named are not exactly the " + reply.array(1).size()
                        + " active under this token on " + lcid + "; nothing changed, the lock is still yours",
                        texts(reply.array(1)));
            case "NOT_FOUND":
                return LockProblem.of(ProblemCode.NOT_FOUND, "no request " + requestId + " on " + lcid);
            case "NOT_DEAD":
                return LockProblem.aboutRequest(ProblemCode.NOT_DEAD,
                        "request " + requestId + " on " + lcid + " is " + text(reply, 1) + ", only DEAD ones are retried",
                        text(reply, 1), (int) number(reply, 2), null);
            default:
                throw new IllegalStateException("unexpected script reply " + tag);
        }
    }

    private static String text(Reply reply, int index) {
        return reply.text(index);
    }

    private static long number(Reply reply, int index) {
        return reply.number(index);
    }
}
