package dev.baton.lock;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.function.Supplier;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import org.jboss.logging.Logger;

import dev.baton.config.BatonConfig;
import dev.baton.redis.Wakeups;
import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.quarkus.runtime.ShutdownEvent;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;

/**
 * The long-polls this replica holds (protocol v1.1 "Long-poll"): calls that wait until a check of
 * the request's state answers something final (a turn picked up, a request ended) or their
 * {@code waitMs} passes. A poll is registered before its first check, so a wake-up published
 * after that check cannot be missed while the subscription is in place; each wake-up, each
 * re-subscription and a slow re-check timer ({@code baton.wait.recheck-ms}) run the check again,
 * so a lost message delays a waiter by at most one re-check interval and never strands it.
 * Checks of one poll never overlap: a wake-up during a check runs one more check after it.
 */
@ApplicationScoped
public class LongPolls implements Wakeups.Listener {

    private static final Logger LOG = Logger.getLogger(LongPolls.class);
    /** Deadlines and re-checks are looked at this often. */
    private static final long TICK_MS = 25;

    /** Why a poll's state is looked at. */
    private enum Cause {
        FIRST, WAKE, RECHECK, RESUBSCRIBED, DEADLINE
    }

    private final Map<String, Set<Poll<?>>> byRequest = new ConcurrentHashMap<>();
    private final AtomicInteger open = new AtomicInteger();
    private final long recheckNanos;
    private final int cap;
    private final LockEvents events;
    private final ScheduledExecutorService timer;
    private volatile boolean closing;

    @Inject
    LongPolls(Wakeups wakeups, BatonConfig config, LockEvents events) {
        this(wakeups, config.waiting().recheckMs(), config.waiting().maxWaiters(), events);
    }

    LongPolls(Wakeups wakeups, long recheckMs, int cap, LockEvents events) {
        this.recheckNanos = TimeUnit.MILLISECONDS.toNanos(recheckMs);
        this.cap = cap;
        this.events = events;
        this.timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "baton-long-polls");
            thread.setDaemon(true);
            return thread;
        });
        timer.scheduleWithFixedDelay(this::tick, TICK_MS, TICK_MS, TimeUnit.MILLISECONDS);
        wakeups.listen(this);
    }

    /** Long-polls open now on this replica. */
    public int open() {
        return open.get();
    }

    /**
     * The first answer of {@code check} that {@code isFinal} accepts, or its last answer once
     * {@code waitMs} has passed. A problem answered by the check ends the wait at once. Without
     * waiting (0), while shutting down, or with {@code baton.wait.max-waiters} polls already
     * open, the first answer is the answer.
     */
    <T> Uni<T> hold(String key, long waitMs, Supplier<Uni<T>> check, Predicate<T> isFinal) {
        if (waitMs <= 0 || closing) {
            return check.get();
        }
        if (open.incrementAndGet() > cap) {
            open.decrementAndGet();
            return check.get();
        }
        return Uni.createFrom().emitter(emitter -> {
            Poll<T> poll = new Poll<>(key, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs), check, isFinal,
                    emitter);
            // compute, here and when a poll leaves: atomic per key, so no poll joins a set being dropped.
            byRequest.compute(key, (k, polls) -> {
                Set<Poll<?>> joined = polls == null ? ConcurrentHashMap.newKeySet() : polls;
                joined.add(poll);
                return joined;
            });
            // A client that hung up: nothing is picked up on its behalf any more.
            emitter.onTermination(poll::leave);
            poll.check(Cause.FIRST);
        });
    }

    @Override
    public void woken(String key) {
        Set<Poll<?>> polls = byRequest.get(key);
        if (polls != null) {
            long at = System.nanoTime();
            polls.forEach(poll -> poll.woken(at));
        }
    }

    @Override
    public void subscribed() {
        forEach(poll -> poll.check(Cause.RESUBSCRIBED));
    }

    /**
     * Shutting down (the delay before the HTTP server stops, or the stop itself): every open
     * long-poll is answered now with what it last saw, so its client asks another replica.
     */
    void shuttingDown(@Observes ShutdownDelayInitiatedEvent event) {
        answerAll();
    }

    void stopping(@Observes ShutdownEvent event) {
        answerAll();
    }

    @PreDestroy
    void close() {
        answerAll();
        timer.shutdownNow();
    }

    private void answerAll() {
        if (!closing) {
            closing = true;
            LOG.debugf("shutting down: answering %d open long-polls", open.get());
        }
        forEach(Poll::answerNow);
    }

    private void tick() {
        try {
            long now = System.nanoTime();
            forEach(poll -> poll.tick(now));
        } catch (RuntimeException e) {
            LOG.warn("long-poll timer", e); // keep the timer alive: a dead one would strand waiters
        }
    }

    private void forEach(java.util.function.Consumer<Poll<?>> action) {
        byRequest.values().forEach(polls -> polls.forEach(action));
    }

    /** One held call. */
    private final class Poll<T> {
        private final String key;
        private final long deadline;
        private final Supplier<Uni<T>> check;
        private final Predicate<T> isFinal;
        private final UniEmitter<? super T> emitter;
        private final AtomicBoolean ended = new AtomicBoolean();
        private final AtomicBoolean checking = new AtomicBoolean();
        /** The check asked for and not begun yet: the strongest cause asked. */
        private final AtomicReference<Cause> asked = new AtomicReference<>();
        private volatile long nextRecheck;
        /** When the latest wake-up arrived (0: none since the last check began). */
        private volatile long wokenAt;
        private volatile T last;

        Poll(String key, long deadline, Supplier<Uni<T>> check, Predicate<T> isFinal, UniEmitter<? super T> emitter) {
            this.key = key;
            this.deadline = deadline;
            this.check = check;
            this.isFinal = isFinal;
            this.emitter = emitter;
            this.nextRecheck = System.nanoTime() + recheckNanos;
        }

        void woken(long at) {
            wokenAt = at;
            check(Cause.WAKE);
        }

        void tick(long now) {
            if (now - deadline >= 0) {
                check(Cause.DEADLINE);
            } else if (now - nextRecheck >= 0) {
                nextRecheck = now + recheckNanos;
                check(Cause.RECHECK);
            }
        }

        void check(Cause cause) {
            asked.accumulateAndGet(cause, (pending, next) -> pending == null || next.compareTo(pending) > 0
                    ? next : pending);
            runAsked();
        }

        /**
         * Begins the asked check unless one runs; the one that runs calls this again when it
         * ends, so a check asked for meanwhile is never lost.
         */
        private void runAsked() {
            while (!ended.get() && asked.get() != null && checking.compareAndSet(false, true)) {
                Cause cause = asked.getAndSet(null);
                if (cause != null) {
                    run(cause);
                    return;
                }
                checking.set(false);
            }
        }

        private void run(Cause cause) {
            long wakeBefore = wokenAt;
            wokenAt = 0;
            Uni<T> uni;
            try {
                uni = check.get();
            } catch (RuntimeException e) {
                checked(cause, wakeBefore, null, e);
                return;
            }
            uni.subscribe().with(item -> checked(cause, wakeBefore, item, null),
                    failure -> checked(cause, wakeBefore, null, failure));
        }

        private void checked(Cause cause, long wakeBefore, T item, Throwable failure) {
            if (failure != null) {
                // A problem (the request ended otherwise, say) is the answer; an unreachable
                // Redis is only the answer when there is no more time to wait for it.
                if (failure instanceof LockProblem || cause == Cause.FIRST || cause == Cause.DEADLINE || closing) {
                    end(() -> emitter.fail(failure));
                    return;
                }
                LOG.debugf("long-poll re-check failed, waiting on: %s", failure.toString());
            } else if (isFinal.test(item) || cause == Cause.DEADLINE || closing) {
                if (cause == Cause.WAKE && wakeBefore != 0) {
                    events.longPollWoken(Duration.ofNanos(System.nanoTime() - wakeBefore));
                } else if ((cause == Cause.RECHECK || cause == Cause.RESUBSCRIBED) && isFinal.test(item)
                        && wakeBefore == 0 && wokenAt == 0) {
                    // The state changed and no wake-up came for it: a lost notification.
                    events.longPollMissedWake();
                }
                end(() -> emitter.complete(item));
                return;
            } else {
                last = item;
            }
            checking.set(false);
            runAsked();
        }

        /** At shutdown: what it last saw, or (before the first check answered) that check's answer. */
        void answerNow() {
            T seen = last;
            if (seen != null) {
                end(() -> emitter.complete(seen));
            }
        }

        void leave() {
            end(() -> {
            });
        }

        private void end(Runnable answer) {
            if (!ended.compareAndSet(false, true)) {
                return;
            }
            byRequest.computeIfPresent(key, (k, polls) -> {
                polls.remove(this);
                return polls.isEmpty() ? null : polls;
            });
            open.decrementAndGet();
            answer.run();
        }
    }
}
