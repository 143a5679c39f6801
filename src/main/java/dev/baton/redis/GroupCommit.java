package dev.baton.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;

/**
 * Group commit of replica acknowledgements (baton.backend.replicas-acked) on one connection:
 * the writes sent on it share WAITs instead of each paying for its own. A write joins once Redis
 * has answered it, so it has run; the group it joins sends, when it goes, {@code SET baton:ack}
 * and then {@code WAIT} on the same connection. The SET moves the connection's replication offset
 * to all the primary has, so the WAIT covers the group's writes and also what an earlier,
 * unanswered attempt of a retried call wrote (its retry may only read it back). The same
 * connection, because a WAIT on another one could be answered by a new primary after a failover
 * that lost the write. At most one WAIT is in flight; writes answered meanwhile join the next
 * group, sent when it returns, so nothing is acknowledged before a WAIT sent after its write has
 * answered.
 * <p>
 * Not for a Cluster: there a write's WAIT must go to its own slot's primary (see ScriptRunner).
 */
final class GroupCommit {

    /** The ack key only has to outlive the WAIT that follows it. */
    static final long ACK_KEY_TTL_MS = 10_000;

    private static final String ACK_KEY = "baton:ack";

    private final Object connection;
    private final Supplier<Uni<Long>> sendWait;
    private CompletableFuture<Long> inFlight;
    private CompletableFuture<Long> next;

    /** batch: sends commands back to back on the connection whose writes this group covers. */
    GroupCommit(Object connection, Function<List<Request>, Uni<List<Response>>> batch, int replicas, long timeoutMs) {
        this.connection = connection;
        this.sendWait = () -> batch.apply(List.of(
                Request.cmd(Command.SET).arg(ACK_KEY).arg("1").arg("PX").arg(ACK_KEY_TTL_MS),
                Request.cmd(Command.WAIT).arg(replicas).arg(timeoutMs)))
                .map(replies -> replies.get(1).toLong());
    }

    /** The connection whose writes it covers. */
    Object connection() {
        return connection;
    }

    /** How many replicas acknowledged a WAIT sent after the caller's write was answered. */
    Uni<Long> acked() {
        CompletableFuture<Long> group;
        boolean send = false;
        synchronized (this) {
            if (inFlight == null) {
                inFlight = new CompletableFuture<>();
                group = inFlight;
                send = true;
            } else {
                if (next == null) {
                    next = new CompletableFuture<>();
                }
                group = next;
            }
        }
        if (send) {
            send(group);
        }
        return Uni.createFrom().completionStage(group);
    }

    private void send(CompletableFuture<Long> group) {
        sendWait.get().subscribe().with(acked -> done(group, acked, null), failure -> done(group, null, failure));
    }

    private void done(CompletableFuture<Long> group, Long acked, Throwable failure) {
        CompletableFuture<Long> queued;
        synchronized (this) {
            queued = next;
            next = null;
            inFlight = queued;
        }
        if (queued != null) {
            send(queued);
        }
        if (failure != null) {
            group.completeExceptionally(failure);
        } else {
            group.complete(acked);
        }
    }
}
