package dev.baton.lock;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import jakarta.enterprise.context.ApplicationScoped;

import dev.baton.lock.LockEvents.Operation;
import dev.baton.redis.LockKeys;
import dev.baton.redis.Reply;
import dev.baton.redis.ScriptCall;
import dev.baton.redis.ScriptRunner;
import dev.baton.redis.ScriptStats;
import io.smallrye.mutiny.Uni;

/**
 * Runs one script on one lcid's keys and does what every such call needs afterwards: hands the
 * script's statistics to the metrics, writes the index hints it asked for, and times the call.
 */
@ApplicationScoped
class LcidScripts {

    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(LcidScripts.class);

    private final ScriptRunner scripts;
    private final LockEvents events;
    private final WorkIndex index;

    LcidScripts(ScriptRunner scripts, LockEvents events, WorkIndex index) {
        this.scripts = scripts;
        this.events = events;
        this.index = index;
    }

    /** A state change or view whose answer is an {@link Outcome} (or a problem). */
    Uni<Outcome> outcome(Operation operation, boolean byHolder, String tenant, String lcid, String requestId,
            ScriptCall call) {
        return run(operation, byHolder, tenant, lcid, requestId, call,
                reply -> ScriptReplies.outcome(lcid, requestId, reply));
    }

    /** requestId: the request the call names, for log lines (null for none). */
    <T> Uni<T> run(Operation operation, boolean byHolder, String tenant, String lcid, String requestId,
            ScriptCall call, Function<Reply, T> parse) {
        AtomicReference<ScriptStats> stats = new AtomicReference<>(ScriptStats.NONE);
        return Uni.createFrom().deferred(() -> {
            long start = System.nanoTime();
            CallContext context = CallContext.current(tenant, lcid, requestId);
            return scripts.run(call, LockKeys.of(tenant, lcid))
                    .map(reply -> {
                        if (call.script().changesState()) {
                            stats.set(reply.stats());
                            index.record(tenant, lcid, stats.get());
                            if (stats.get().renewedLate()) {
                                events.lateHeartbeat(tenant, stats.get().renewedAfterMs(), stats.get().renewedLeaseMs());
                            }
                        }
                        return parse.apply(reply);
                    })
                    .onItemOrFailure().invoke((item, failure) -> {
                        events.completed(operation, context, Duration.ofNanos(System.nanoTime() - start),
                                asOutcome(item), failure, stats.get(), byHolder);
                        // Names only: an outcome's toString would carry its token.
                        LOG.debugf("%s %s|%s -> %s", operation, tenant, lcid, failure != null
                                ? failure.getClass().getSimpleName() : item.getClass().getSimpleName());
                    });
        });
    }

    /** A read that changes nothing and reports nothing: index tidying and listings. */
    Uni<Reply> peek(String tenant, String lcid, ScriptCall call) {
        return scripts.run(call, LockKeys.of(tenant, lcid));
    }

    private static Outcome asOutcome(Object item) {
        if (item instanceof Outcome outcome) {
            return outcome;
        }
        if (item instanceof ClaimAnswer.Claimed claimed) {
            return claimed.next();
        }
        return null;
    }
}
