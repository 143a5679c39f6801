package dev.baton.ops;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import dev.baton.lock.CallContext;
import dev.baton.lock.LockEvents;
import dev.baton.lock.LockProblem;
import dev.baton.lock.Outcome;
import dev.baton.lock.ProblemCode;
import dev.baton.redis.BackendEvents;
import dev.baton.redis.ScriptStats;
import dev.baton.redis.BackendUnavailableException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * Baton's domain metrics. Labels are fixed, small sets: never an lcid or a requestId, so the
 * number of series does not grow with traffic. Also the one warning about how clients use
 * leases (late heartbeats), which only the service can see.
 */
@Singleton
public class LockMetrics implements LockEvents, BackendEvents {

    private static final Logger LOG = Logger.getLogger(LockMetrics.class);

    private final Counter acquireAcquired;
    private final Counter acquireQueued;
    private final Counter acquireNext;
    private final Counter acquireRejected;
    private final Counter completeNext;
    private final Counter completeReleased;
    private final Counter abortByHolder;
    private final Counter abortByWaiter;
    private final Counter heartbeats;
    private final Counter leaseLost;
    private final Counter requeued;
    private final Counter dead;
    private final Map<Operation, Timer> operations = new EnumMap<>(Operation.class);
    private final Map<ProblemCode, Counter> rejections = new EnumMap<>(ProblemCode.class);
    private final Timer queueWait;
    private final Timer hold;
    private final Counter pickupTimeouts;
    private final Timer wakeUp;
    private final Counter missedWakeUps;
    private final Counter replicaAckTimeouts;
    private final Counter lateHeartbeats;
    /** Once per tenant: a team gets the hint without a log line per heartbeat. */
    private final Set<String> warnedOfLateHeartbeats = ConcurrentHashMap.newKeySet();

    public LockMetrics(MeterRegistry registry) {
        // outcome=rejected: QUEUE_FULL, DUPLICATE_REQUEST or the backend failed; bad input never gets here.
        String acquire = "Acquire calls by outcome: acquired, queued, next, or rejected (a problem answer)";
        acquireAcquired = counter(registry, "baton.acquire", acquire, "outcome", "acquired");
        acquireQueued = counter(registry, "baton.acquire", acquire, "outcome", "queued");
        acquireNext = counter(registry, "baton.acquire", acquire, "outcome", "next");
        acquireRejected = counter(registry, "baton.acquire", acquire, "outcome", "rejected");
        String complete = "Completed requests by what followed: next (handoff) or released";
        completeNext = counter(registry, "baton.complete", complete, "outcome", "next");
        completeReleased = counter(registry, "baton.complete", complete, "outcome", "released");
        String abort = "Aborts: the holder gave up its request (by=holder) or a waiter withdrew (by=waiter)";
        abortByHolder = counter(registry, "baton.abort", abort, "by", "holder");
        abortByWaiter = counter(registry, "baton.abort", abort, "by", "waiter");
        heartbeats = Counter.builder("baton.heartbeat").description("Leases renewed").register(registry);
        leaseLost = Counter.builder("baton.lease.lost")
                .description("409 LOCK_LOST answers: a token that is not the live holder's").register(registry);
        requeued = Counter.builder("baton.requeued")
                .description("Requests put back at the head of their queue (lease ran out, abort with requeue)")
                .register(registry);
        dead = Counter.builder("baton.dead").description("Requests declared DEAD after max attempts")
                .register(registry);
        for (ProblemCode code : ProblemCode.values()) {
            rejections.put(code, counter(registry, "baton.rejected",
                    "Operations answered with a problem, by its code (bad input excluded)", "code", code.name()));
        }
        for (Operation operation : Operation.values()) {
            operations.put(operation, latency("baton.operation", "Time of one protocol operation, Redis included",
                    Duration.ofNanos(100_000), Duration.ofSeconds(10))
                    .tag("operation", operation.label()).register(registry));
        }
        queueWait = latency("baton.queue.wait", "Time a request waited in the queue before it became active",
                Duration.ofMillis(1), Duration.ofMinutes(10)).register(registry);
        hold = latency("baton.hold", "Time a request was active before it was completed",
                Duration.ofMillis(1), Duration.ofMinutes(10)).register(registry);
        pickupTimeouts = Counter.builder("baton.pickup.timeouts")
                .description("Wait-mode turns that ended ABORTED (PICKUP_TIMEOUT): their submitter never picked them up")
                .register(registry);
        wakeUp = latency("baton.longpoll.wakeup", "From a wake-up reaching this replica to the long-poll's answer",
                Duration.ofNanos(100_000), Duration.ofSeconds(5)).register(registry);
        missedWakeUps = Counter.builder("baton.longpoll.missed.wakeups")
                .description("Re-checks of long-polls that found a change no wake-up had announced (lost notifications)")
                .register(registry);
        replicaAckTimeouts = Counter.builder("baton.replica.ack.timeouts")
                .description("Writes fewer replicas than baton.backend.replicas-acked confirmed in time (WAIT): answered 503")
                .register(registry);
        lateHeartbeats = Counter.builder("baton.late.heartbeats")
                .description("Heartbeats that renewed a lease after more than half of it had run")
                .register(registry);
    }

    @Override
    public void lateHeartbeat(String tenant, long afterMs, long leaseMs) {
        lateHeartbeats.increment();
        if (warnedOfLateHeartbeats.add(tenant)) {
            LOG.warnf("Tenant %s renews leases late: a heartbeat came %d ms into a lease of %d ms. Heartbeat at most"
                    + " every lease/3, with a lease that outlasts the Redis stalls you accept (docs/protocol.md,"
                    + " lease sizing). Said once per tenant; baton_late_heartbeats_total counts every late one.",
                    tenant, afterMs, leaseMs);
        }
    }

    @Override
    public void completed(Operation operation, CallContext call, Duration took, Outcome outcome, Throwable failure,
            ScriptStats stats, boolean byHolder) {
        OperatorLog.completed(operation, call, failure, stats);
        operations.get(operation).record(took);
        requeued.increment(stats.requeued());
        dead.increment(stats.dead());
        pickupTimeouts.increment(stats.pickupTimeouts());
        if (stats.queueWaitMs() >= 0) {
            queueWait.record(Duration.ofMillis(stats.queueWaitMs()));
        }
        if (stats.holdMs() >= 0) {
            hold.record(Duration.ofMillis(stats.holdMs()));
        }
        if (failure instanceof LockProblem problem) {
            rejections.get(problem.code()).increment();
            if (problem.code() == ProblemCode.LOCK_LOST) {
                leaseLost.increment();
            }
        } else if (failure instanceof BackendUnavailableException) {
            rejections.get(ProblemCode.BACKEND_UNAVAILABLE).increment();
        }
        switch (operation) {
            case ACQUIRE -> countAcquire(outcome);
            case COMPLETE -> {
                if (outcome instanceof Outcome.Next) {
                    completeNext.increment();
                } else if (outcome instanceof Outcome.Released) {
                    completeReleased.increment();
                }
            }
            case ABORT -> {
                if (outcome != null) {
                    (byHolder ? abortByHolder : abortByWaiter).increment();
                }
            }
            case HEARTBEAT -> {
                if (outcome != null) {
                    heartbeats.increment();
                }
            }
            default -> {
                // views are timed only
            }
        }
    }

    @Override
    public void longPollWoken(Duration took) {
        wakeUp.record(took);
    }

    @Override
    public void replicasMissing() {
        replicaAckTimeouts.increment();
    }

    @Override
    public void longPollMissedWake() {
        missedWakeUps.increment();
    }

    private void countAcquire(Outcome outcome) {
        if (outcome instanceof Outcome.Acquired) {
            acquireAcquired.increment();
        } else if (outcome instanceof Outcome.Queued) {
            acquireQueued.increment();
        } else if (outcome instanceof Outcome.Next) {
            acquireNext.increment();
        } else {
            acquireRejected.increment();
        }
    }

    private static Counter counter(MeterRegistry registry, String name, String description, String tag,
            String value) {
        return Counter.builder(name).description(description).tag(tag, value).register(registry);
    }

    /** Histogram buckets, so that p99 can be computed across pods in Prometheus. */
    private static Timer.Builder latency(String name, String description, Duration min, Duration max) {
        return Timer.builder(name).description(description)
                .publishPercentileHistogram()
                .minimumExpectedValue(min)
                .maximumExpectedValue(max);
    }
}
