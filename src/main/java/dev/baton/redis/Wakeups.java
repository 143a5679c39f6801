package dev.baton.redis;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import org.jboss.logging.Logger;

import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.RedisConnection;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;

/**
 * This replica's subscription to the channel the scripts publish on when a request got its turn
 * or ended (lua/includes/wake.lua), so that a long-poll held here is woken by a change made
 * through any replica. One dedicated connection, opened at start-up and again whenever it drops
 * (a Redis restart, a failover, {@code CLIENT KILL TYPE pubsub}). Messages sent while it was down
 * are lost, so every (re)subscription tells the listener to look at all its waiters again.
 */
@ApplicationScoped
public class Wakeups {

    /** The channel of lua/includes/wake.lua. */
    public static final String CHANNEL = "baton:wake";

    private static final Logger LOG = Logger.getLogger(Wakeups.class);
    private static final Duration RETRY_FIRST = Duration.ofMillis(100);
    private static final Duration RETRY_MAX = Duration.ofSeconds(2);

    /** What the subscription tells its listener. */
    public interface Listener {
        /** The request named by {@link #key} got its turn or ended. */
        void woken(String key);

        /** The subscription is (again) in place: anything published while it was not was missed. */
        void subscribed();
    }

    private final Redis redis;
    private final AtomicReference<RedisConnection> current = new AtomicReference<>();
    private volatile Listener listener;
    private volatile boolean subscribed;
    private volatile boolean closed;
    private volatile Duration retry = RETRY_FIRST;

    public Wakeups(Redis redis) {
        this.redis = redis;
    }

    /** How a request is named in the channel's messages: the lcid's hash tag, then the requestId. */
    public static String key(String tenant, String lcid, String requestId) {
        return "{" + tenant + "|" + lcid + "}" + requestId;
    }

    public void listen(Listener listener) {
        this.listener = listener;
    }

    /** Whether messages are being received now (false while the connection is being re-opened). */
    public boolean subscribed() {
        return subscribed;
    }

    void start(@Observes StartupEvent started) {
        connect();
    }

    /** Before the Redis client and Mutiny's context go away: a connection ending later is not reopened. */
    void stopping(@Observes ShutdownEvent stopping) {
        close();
    }

    @PreDestroy
    void close() {
        closed = true;
        subscribed = false;
        RedisConnection connection = current.getAndSet(null);
        if (connection != null) {
            connection.close().subscribe().with(ignored -> {
            }, ignored -> {
            });
        }
    }

    private void connect() {
        if (closed) {
            return;
        }
        redis.connect().subscribe().with(connection -> {
            if (closed) {
                connection.close().subscribe().with(ignored -> {
                }, ignored -> {
                });
                return;
            }
            current.set(connection);
            AtomicBoolean confirmed = new AtomicBoolean();
            connection.handler(message -> receive(connection, message, confirmed));
            connection.exceptionHandler(failure -> lost(connection, failure));
            connection.endHandler(() -> lost(connection, null));
            connection.send(Request.cmd(Command.SUBSCRIBE).arg(CHANNEL)).subscribe().with(
                    reply -> confirm(confirmed),
                    failure -> lost(connection, failure));
        }, failure -> {
            LOG.debugf("wake subscription: connect failed: %s", failure.toString());
            retryLater();
        });
    }

    private void receive(RedisConnection connection, Response message, AtomicBoolean confirmed) {
        if (message == null || message.size() < 3 || current.get() != connection) {
            return;
        }
        String kind = message.get(0).toString();
        if ("message".equals(kind)) {
            Listener target = listener;
            if (target != null) {
                target.woken(message.get(2).toString());
            }
        } else if ("subscribe".equals(kind)) {
            confirm(confirmed);
        }
    }

    /** Once per connection, whichever of the reply and the pushed confirmation comes first. */
    private void confirm(AtomicBoolean confirmed) {
        if (!confirmed.compareAndSet(false, true)) {
            return;
        }
        subscribed = true;
        retry = RETRY_FIRST;
        LOG.debugf("wake subscription in place on %s", CHANNEL);
        Listener target = listener;
        if (target != null) {
            target.subscribed();
        }
    }

    private void lost(RedisConnection connection, Throwable failure) {
        if (closed || !current.compareAndSet(connection, null)) {
            return;
        }
        subscribed = false;
        LOG.debugf("wake subscription lost: %s", failure == null ? "closed" : failure.toString());
        connection.close().subscribe().with(ignored -> {
        }, ignored -> {
        });
        retryLater();
    }

    private void retryLater() {
        if (closed) {
            return;
        }
        Duration wait = retry;
        retry = wait.multipliedBy(2).compareTo(RETRY_MAX) > 0 ? RETRY_MAX : wait.multipliedBy(2);
        Uni.createFrom().voidItem().onItem().delayIt().by(wait).subscribe().with(ignored -> connect());
    }
}
