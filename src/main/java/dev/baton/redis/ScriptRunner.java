package dev.baton.redis;

import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import dev.baton.config.BatonConfig;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;

/**
 * Runs a {@link LuaScript} with EVALSHA and falls back to EVAL (which also caches the script)
 * when the server answers NOSCRIPT: after a restart, a failover, or on a Cluster node that has
 * not seen the script yet. Failures of the backend itself become {@link BackendUnavailableException}.
 */
@ApplicationScoped
public class ScriptRunner {

    private static final Logger LOG = Logger.getLogger(ScriptRunner.class);

    /**
     * Error replies that mean "the script or command is wrong": a bug, answered 500. Every other
     * error (LOADING, BUSY, READONLY, OOM, CLUSTERDOWN, the client's CONNECTION_CLOSED, ...) means
     * "Redis cannot serve right now", answered 503 so that clients retry.
     */
    /** How Redis names a line of the running script: user_script:12 (7.x), @user_script:12 (6.2). */
    private static final Pattern SCRIPT_LINE = Pattern.compile("user_script:(\\d+)");

    private static final Set<String> BUG_ERRORS = Set.of("ERR", "WRONGTYPE", "NOPERM", "NOAUTH", "WRONGPASS");

    private final SharedConnections redis;
    private final int replicasAcked;
    private final Duration replicasTimeout;
    private final BackendEvents events;
    private final LayoutVersion layout;
    private final ScriptSpans spans;
    private final BackendStatus status;
    /** When each script was last reported missing from the server's cache (NOSCRIPT), epoch ms. */
    private final Map<LuaScript, AtomicLong> noScriptReported = new EnumMap<>(LuaScript.class);
    /** Whether writes share WAITs (not on a Cluster: see attempt). */
    private final boolean groupCommit;

    public ScriptRunner(SharedConnections redis, BatonConfig config, BackendEvents events, LayoutVersion layout,
            ScriptSpans spans, BackendStatus status,
            @ConfigProperty(name = "quarkus.redis.client-type", defaultValue = "standalone") String clientType) {
        this.redis = redis;
        this.layout = layout;
        this.spans = spans;
        this.status = status;
        for (LuaScript script : LuaScript.values()) {
            noScriptReported.put(script, new AtomicLong());
        }
        this.replicasAcked = config.backend().replicasAcked();
        this.replicasTimeout = config.backend().replicasTimeout();
        this.events = events;
        this.groupCommit = !"cluster".equalsIgnoreCase(clientType);
    }

    /** One lcid script on the lcid's keys. */
    public Uni<Reply> run(ScriptCall call, LockKeys keys) {
        return runRaw(call.script(), keys.asList(), call.argv(), keys.ack()).map(Reply::new);
    }

    Uni<Reply> run(LuaScript script, List<String> keys, List<String> args) {
        return runRaw(script, keys, args).map(Reply::new);
    }

    /** For this package's own reply readers (index listings). */
    Uni<Response> runRaw(LuaScript script, List<String> keys, List<String> args) {
        return runRaw(script, keys, args, null);
    }

    /** Every script waits for the layout check: a replica must never read or write another layout's keys. */
    private Uni<Response> runRaw(LuaScript script, List<String> keys, List<String> args, String ackKey) {
        Uni<Response> run = runChecked(script, keys, args, ackKey);
        return spans.traced(script, layout.verified() ? run : guarded(layout.check()).chain(() -> run));
    }

    /**
     * One failure handler for the whole call (each Mutiny operator costs a context capture on every
     * call, also when nothing fails): NOSCRIPT retries with EVAL, then {@link #translated}.
     */
    private Uni<Response> runChecked(LuaScript script, List<String> keys, List<String> args, String ackKey) {
        return attempt(Command.EVALSHA, script.sha1(), script, keys, args, ackKey).onFailure().recoverWithUni(failure -> {
            if (!isNoScript(failure)) {
                return Uni.createFrom().failure(translated(script, failure));
            }
            noScript(script);
            return attempt(Command.EVAL, script.source(), script, keys, args, ackKey).onFailure()
                    .transform(again -> translated(script, again));
        });
    }

    /**
     * Once a second per script at most: every call in flight when Redis restarted finds it missing,
     * and one line says what happened. On a Cluster each node answers NOSCRIPT the first time it
     * runs a script, so there this line also appears once per script and node after a start.
     */
    private void noScript(LuaScript script) {
        AtomicLong last = noScriptReported.get(script);
        long now = System.currentTimeMillis();
        long before = last.get();
        if (now - before >= 1000 && last.compareAndSet(before, now)) {
            LOG.infof("Script %s was not in Redis's script cache (Redis restarted, failed over or was flushed,"
                    + " or a Cluster node runs it for the first time): sent it again with EVAL", script.spanName());
        }
    }

    /**
     * A backend fault becomes "unavailable" (503); any other error reply is a bug of the script,
     * named with its line.
     */
    private Throwable translated(LuaScript script, Throwable failure) {
        if (isBackendFault(failure)) {
            return unavailable(failure);
        }
        return isErrorReply(failure) ? located(script, failure) : failure;
    }

    /**
     * One run of the script; when answers must wait for replicas (baton.backend.replicas-acked)
     * a writing one is answered only after a WAIT that covers it. WAIT cannot run inside a script.
     * On one server (standalone, Sentinel) concurrent writes share WAITs ({@link GroupCommit}).
     * On a Cluster each write is followed, on the connection to its own slot's primary, by a
     * write to the lcid's ack key and its own WAIT: the ack key makes WAIT also cover what an
     * earlier, unacknowledged attempt wrote when a retry only reads it back.
     */
    private Uni<Response> attempt(Command command, String scriptOrSha, LuaScript script, List<String> keys,
            List<String> args, String ackKey) {
        Request run = request(command, scriptOrSha, keys, args);
        if (replicasAcked == 0 || !script.writes()) {
            return send(run);
        }
        if (groupCommit) {
            return redis.sendAcked(run, replicasAcked, replicasTimeout).map(acked -> {
                checkAcked(acked.replicas());
                return acked.reply();
            });
        }
        Request wait = Request.cmd(Command.WAIT).arg(replicasAcked).arg(replicasTimeout.toMillis());
        List<Request> batch = ackKey == null ? List.of(run, wait)
                : List.of(run, Request.cmd(Command.SET).arg(ackKey).arg("1").arg("PX").arg(GroupCommit.ACK_KEY_TTL_MS),
                        wait);
        return redis.batch(batch).map(replies -> {
            checkAcked(replies.get(replies.size() - 1).toLong());
            return replies.get(0);
        });
    }

    private void checkAcked(long acked) {
        if (acked < replicasAcked) {
            events.replicasMissing();
            throw new ReplicasNotAckedException(acked, replicasAcked, replicasTimeout);
        }
    }

    /** A script's own error, with the line Redis names translated to the helper file it came from. */
    static Throwable located(LuaScript script, Throwable failure) {
        String message = String.valueOf(failure.getMessage());
        Matcher line = SCRIPT_LINE.matcher(message);
        String where = line.find() ? " at " + script.where(Integer.parseInt(line.group(1))) : "";
        return new ScriptFailedException("script " + script.name().toLowerCase() + where + ": " + message, failure);
    }

    /** A plain command, with the same timeout and failure translation as the scripts. */
    public Uni<Response> call(Command command, String... args) {
        Request request = Request.cmd(command);
        for (String arg : args) {
            request.arg(arg);
        }
        return guarded(send(request));
    }

    /** Calls time out in {@link SharedConnections}; here every other backend fault becomes "unavailable". */
    private <T> Uni<T> guarded(Uni<T> call) {
        return call.onFailure(ScriptRunner::isBackendFault).transform(this::unavailable);
    }

    /**
     * Makes sure the server has every script cached, loading the missing ones: what readiness
     * means for Baton. Answers how many scripts are loaded.
     */
    public Uni<Integer> ensureLoaded() {
        LuaScript[] all = LuaScript.values();
        Request exists = Request.cmd(Command.SCRIPT).arg("EXISTS");
        for (LuaScript script : all) {
            exists.arg(script.sha1());
        }
        return guarded(send(exists)
                .chain(reply -> {
                    List<Uni<Response>> loads = new java.util.ArrayList<>();
                    for (int i = 0; i < all.length; i++) {
                        if (reply.get(i).toInteger() == 0) {
                            loads.add(send(Request.cmd(Command.SCRIPT).arg("LOAD").arg(all[i].source())));
                        }
                    }
                    return loads.isEmpty() ? Uni.createFrom().item(all.length)
                            : Uni.join().all(loads).andFailFast().map(done -> all.length);
                }));
    }

    private Uni<Response> send(Request request) {
        return redis.send(request);
    }

    private static Request request(Command command, String scriptOrSha, List<String> keys, List<String> args) {
        Request request = Request.cmd(command).arg(scriptOrSha).arg(keys.size());
        keys.forEach(request::arg);
        args.forEach(request::arg);
        return request;
    }

    private static boolean isNoScript(Throwable t) {
        return isErrorReply(t) && t.getMessage() != null && t.getMessage().startsWith("NOSCRIPT");
    }

    private static boolean isErrorReply(Throwable t) {
        return t instanceof io.vertx.redis.client.Response;
    }

    private static boolean isBackendFault(Throwable t) {
        if (t instanceof BackendUnavailableException) {
            return false;
        }
        if (!isErrorReply(t)) {
            return true; // connection refused, reset, pool exhausted, closed
        }
        String message = t.getMessage() == null ? "" : t.getMessage();
        int space = message.indexOf(' ');
        String kind = space < 0 ? message : message.substring(0, space);
        return !BUG_ERRORS.contains(kind) || message.startsWith("ERR max number of clients");
    }

    private Throwable unavailable(Throwable t) {
        status.unavailable(t);
        return new BackendUnavailableException("Redis is unavailable: " + t.getMessage(), t);
    }
}
