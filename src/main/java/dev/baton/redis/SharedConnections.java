package dev.baton.redis;

import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.logging.Logger;

import dev.baton.config.BatonConfig;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.RedisConnection;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;
import io.vertx.redis.client.impl.types.ErrorType;

/**
 * A few long-lived connections, taken from the Quarkus Redis client, that every request shares
 * (baton.backend.connections, in turn): calls are pipelined on them, so under load Redis reads and
 * answers many calls per system call instead of one call per pooled connection. (One connection
 * per event-loop thread, to keep each call on its thread, measured slower: fewer calls per batch.)
 * A connection that fails, closes, does not open in time or leaves a call unanswered past the
 * backend timeout is dropped (handed back to the client's pool, which discards broken ones), and
 * the next call takes one again: a Redis restart or failover heals without restarting the service.
 */
@ApplicationScoped
public class SharedConnections {

    private static final Logger LOG = Logger.getLogger(SharedConnections.class);

    private final Redis redis;
    private final BackendStatus status;
    private final Duration timeout;
    private final Slot[] slots;
    private final AtomicInteger next = new AtomicInteger();

    public SharedConnections(Redis redis, BatonConfig config, BackendStatus status) {
        this.redis = redis;
        this.status = status;
        this.timeout = config.backend().timeout();
        this.slots = new Slot[Math.max(1, config.backend().connections())];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Slot();
        }
    }

    /** Sends on one of the shared connections; fails with BackendUnavailableException after the timeout. */
    public Uni<Response> send(Request request) {
        return onConnection(connection -> connection.send(request));
    }

    /**
     * Sends these commands back to back on one shared connection (on a Cluster, to the node of
     * their keys), so that a command can act on what the ones before it did there: WAIT after a
     * script. An error reply of any of them fails the whole batch with that error.
     */
    public Uni<List<Response>> batch(List<Request> requests) {
        return onConnection(connection -> connection.batch(requests)
                .onFailure(SharedConnections::isBatchError).transform(SharedConnections::unwrapped));
    }

    /** A write's reply and how many replicas acknowledged it. */
    public record Acked(Response reply, long replicas) {
    }

    /**
     * Sends a write and answers it once a WAIT for {@code replicas} replicas, sent on the same
     * connection after the write's reply, has answered ({@link GroupCommit}: writes answered
     * together share one WAIT). Not on a Cluster.
     */
    public Uni<Acked> sendAcked(Request write, int replicas, Duration replicasTimeout) {
        return onSlot((slot, connection) -> connection.send(write)
                .chain(reply -> slot.group(connection, replicas, replicasTimeout).acked()
                        .map(acked -> new Acked(reply, acked))));
    }

    private <T> Uni<T> onConnection(Function<RedisConnection, Uni<T>> call) {
        return onSlot((slot, connection) -> call.apply(connection));
    }

    private <T> Uni<T> onSlot(java.util.function.BiFunction<Slot, RedisConnection, Uni<T>> call) {
        Slot slot = slots[Math.floorMod(next.getAndIncrement(), slots.length)];
        AtomicReference<RedisConnection> used = new AtomicReference<>();
        // The usual case, an open connection, without waiting on the one being opened.
        RedisConnection open = slot.open.get();
        Uni<T> sent;
        if (open != null) {
            used.set(open);
            sent = call.apply(slot, open);
        } else {
            sent = slot.connection().chain(connection -> {
                used.set(connection);
                return call.apply(slot, connection);
            });
        }
        return sent
                // Any answer ends an outage, whatever asked (a readiness probe, a hint, a sweep): the
                // "answers again" line then tells how long Redis was gone, not how long until the
                // next API call.
                .invoke(() -> status.answered())
                .ifNoItem().after(timeout).failWith(() -> new BackendUnavailableException(
                        "Redis did not answer within " + timeout.toMillis() + " ms", null))
                // An error reply comes over a healthy connection, and so does "too many calls in
                // flight" (answered 503 like any overload); anything else may mean it is broken.
                // READONLY does too, but from a primary that was turned into a replica (a failover
                // it survived): only a new connection finds the new primary.
                .onFailure(failure -> isReadOnly(failure)
                        || !(failure instanceof io.vertx.redis.client.Response) && !isFull(failure))
                .invoke(failure -> {
                    if (used.get() != null) {
                        slot.drop(used.get(), failure);
                    }
                });
    }

    private static boolean isReadOnly(Throwable failure) {
        return failure instanceof io.vertx.redis.client.Response && String.valueOf(failure.getMessage()).startsWith("READONLY");
    }

    /**
     * The client rewrites a batch's error reply as "ERR [index] reply" (minus the reply's own
     * "ERR "); the Cluster client wraps that once more, as "ERR [ERR [index] ] reply".
     */
    private static final Pattern BATCH_ERROR = Pattern.compile("^ERR \\[(?:\\d+|ERR \\[\\d+\\] ?)\\] ?(.*)$", Pattern.DOTALL);

    /** How the client names a failure that is not a reply: a Java exception, "java.io.IOException: ...". */
    private static final Pattern JAVA_FAILURE = Pattern.compile("^[a-z][\\w$]*(\\.[\\w$]+)+(: .*)?$", Pattern.DOTALL);

    static boolean isBatchError(Throwable failure) {
        return failure instanceof io.vertx.redis.client.Response && BATCH_ERROR.matcher(String.valueOf(failure.getMessage())).matches();
    }

    /** Back to the first command's own error reply, so it is classified like a single command's. */
    static Throwable unwrapped(Throwable failure) {
        Matcher matcher = BATCH_ERROR.matcher(String.valueOf(failure.getMessage()));
        if (!matcher.matches()) {
            return failure;
        }
        String first = matcher.group(1).lines().findFirst().orElse("");
        if (JAVA_FAILURE.matcher(first).matches()) {
            // not a reply: the connection failed under the batch (reset, closed)
            return new BackendUnavailableException("Redis connection failed: " + first, failure);
        }
        int space = first.indexOf(' ');
        String kind = space < 0 ? first : first.substring(0, space);
        // An error code is one upper-case word (NOSCRIPT, READONLY, BUSY); without one it was ERR.
        boolean coded = !kind.isEmpty() && kind.chars().allMatch(c -> Character.isUpperCase(c) || c == '_');
        return ErrorType.create(coded ? first : "ERR " + first);
    }

    private static boolean isFull(Throwable failure) {
        String message = failure.getMessage();
        return message != null && message.toLowerCase(java.util.Locale.ROOT).contains("waiting queue is full");
    }

    @PreDestroy
    void close() {
        for (Slot slot : slots) {
            slot.drop(null, null);
        }
    }

    private static void quietly(Uni<?> uni) {
        uni.subscribe().with(ignored -> {
        }, ignored -> {
        });
    }

    /** One shared connection, opened on first use and again after it was dropped. */
    private final class Slot {
        /** The connection being opened or open (memoized), null when there is none. */
        private final AtomicReference<Uni<RedisConnection>> current = new AtomicReference<>();
        private final AtomicReference<RedisConnection> open = new AtomicReference<>();
        /** The group commit of the open connection: dropped with it, so a WAIT never goes to another one. */
        private final AtomicReference<GroupCommit> group = new AtomicReference<>();

        GroupCommit group(RedisConnection connection, int replicas, Duration replicasTimeout) {
            GroupCommit current = group.get();
            if (current != null && current.connection() == connection) {
                return current;
            }
            GroupCommit fresh = new GroupCommit(connection, requests -> connection.batch(requests)
                    .onFailure(SharedConnections::isBatchError).transform(SharedConnections::unwrapped),
                    replicas, replicasTimeout.toMillis());
            return group.compareAndSet(current, fresh) ? fresh : group(connection, replicas, replicasTimeout);
        }

        Uni<RedisConnection> connection() {
            Uni<RedisConnection> uni = current.get();
            if (uni != null) {
                return uni;
            }
            Uni<RedisConnection> fresh = open();
            return current.compareAndSet(null, fresh) ? fresh : current.get();
        }

        private Uni<RedisConnection> open() {
            AtomicReference<Uni<RedisConnection>> self = new AtomicReference<>();
            Uni<RedisConnection> uni = Uni.createFrom().<RedisConnection> emitter(emitter -> {
                AtomicBoolean settled = new AtomicBoolean();
                Cancellable timer = Uni.createFrom().voidItem().onItem().delayIt().by(timeout).subscribe().with(
                        late -> {
                            if (settled.compareAndSet(false, true)) {
                                emitter.fail(new BackendUnavailableException(
                                        "Redis did not accept a connection within " + timeout.toMillis() + " ms", null));
                            }
                        });
                redis.connect().subscribe().with(connection -> {
                    if (settled.compareAndSet(false, true)) {
                        timer.cancel();
                        emitter.complete(connection);
                    } else {
                        quietly(connection.close()); // opened after we gave up on it
                    }
                }, failure -> {
                    if (settled.compareAndSet(false, true)) {
                        timer.cancel();
                        emitter.fail(failure);
                    }
                });
            }).invoke(connection -> {
                open.set(connection);
                connection.exceptionHandler(failure -> drop(connection, failure));
                connection.endHandler(() -> drop(connection, null));
            }).onFailure().invoke(failure -> current.compareAndSet(self.get(), null))
                    .memoize().indefinitely();
            self.set(uni);
            return uni;
        }

        /** Drops the slot's connection if it still is the given one (null: whatever it is). */
        void drop(RedisConnection connection, Throwable failure) {
            RedisConnection was = open.get();
            if (was == null || (connection != null && was != connection) || !open.compareAndSet(was, null)) {
                return;
            }
            current.set(null);
            LOG.debugf("shared Redis connection dropped: %s", failure == null ? "closed" : failure.toString());
            quietly(was.close());
        }
    }
}
