package dev.baton.lock;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import jakarta.enterprise.context.ApplicationScoped;

import dev.baton.lock.LockEvents.Operation;
import dev.baton.redis.LockKeys;
import dev.baton.redis.LuaScript;
import dev.baton.redis.ScriptRunner;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Response;

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
            LuaScript script, List<String> args) {
        return run(operation, byHolder, tenant, lcid, script, args,
                reply -> ScriptReplies.outcome(lcid, requestId, reply));
    }

    <T> Uni<T> run(Operation operation, boolean byHolder, String tenant, String lcid, LuaScript script,
            List<String> args, Function<Response, T> parse) {
        AtomicReference<ScriptStats> stats = new AtomicReference<>(ScriptStats.NONE);
        return Uni.createFrom().deferred(() -> {
            long start = System.nanoTime();
            return scripts.run(script, LockKeys.of(tenant, lcid), args)
                    .invoke(reply -> {
                        if (script.changesState()) {
                            stats.set(ScriptReplies.stats(reply));
                            index.record(tenant, lcid, stats.get());
                        }
                    })
                    .map(parse)
                    .onItemOrFailure().invoke((item, failure) -> {
                        events.completed(operation, Duration.ofNanos(System.nanoTime() - start), asOutcome(item),
                                failure, stats.get(), byHolder);
                        // Names only: an outcome's toString would carry its token.
                        LOG.debugf("%s %s|%s -> %s", operation, tenant, lcid, failure != null
                                ? failure.getClass().getSimpleName() : item.getClass().getSimpleName());
                    });
        });
    }

    /** A read that changes nothing and reports nothing: index tidying and listings. */
    Uni<Response> peek(String tenant, String lcid, LuaScript script, List<String> args) {
        return scripts.run(script, LockKeys.of(tenant, lcid), args);
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
