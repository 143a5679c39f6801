package dev.baton.redis;

import java.time.Duration;
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
    private final Duration timeout;
    private final Slot[] slots;
    private final AtomicInteger next = new AtomicInteger();

    public SharedConnections(Redis redis, BatonConfig config) {
        this.redis = redis;
        this.timeout = config.backend().timeout();
        this.slots = new Slot[Math.max(1, config.backend().connections())];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Slot();
        }
    }

    /** Sends on one of the shared connections; fails with BackendUnavailableException after the timeout. */
    public Uni<Response> send(Request request) {
        Slot slot = slots[Math.floorMod(next.getAndIncrement(), slots.length)];
        AtomicReference<RedisConnection> used = new AtomicReference<>();
        return slot.connection()
                .chain(connection -> {
                    used.set(connection);
                    return connection.send(request);
                })
                .ifNoItem().after(timeout).failWith(() -> new BackendUnavailableException(
                        "Redis did not answer within " + timeout.toMillis() + " ms", null))
                // An error reply comes over a healthy connection, and so does "too many calls in
                // flight" (answered 503 like any overload); anything else may mean it is broken.
                .onFailure(failure -> !(failure instanceof io.vertx.redis.client.Response) && !isFull(failure))
                .invoke(failure -> {
                    if (used.get() != null) {
                        slot.drop(used.get(), failure);
                    }
                });
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
