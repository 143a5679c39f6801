package dev.baton.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * The failover drill both topologies run: a closed-loop load of 16 clients on 24 lcids; after
 * 3 s the primary is killed with SIGKILL; once its replica has taken over, the killed node is
 * started again 2 s later (as Kubernetes or systemd would) and rejoins as a replica; 4 s more of
 * load, then the clients finish what they hold, orphaned work is claimed, and every
 * acknowledged request is looked up.
 */
public final class FailoverDrill {

    public static final int CLIENTS = 16;
    public static final int LCIDS = 24;
    /** Longer than most outages here, so that few attempts run out while Redis cannot confirm writes. */
    public static final int LEASE_MS = 15000;

    private FailoverDrill() {
    }

    /** Times in ms after the SIGKILL: the replica promoted, the killed node started again and replicating. */
    public record Result(FailoverLoad.Report report, long promotedAfterMs, long restartedAfterMs, long replicatingAfterMs,
            long first503AfterMs, long last503AfterMs, long notReadyFromMs, long notReadyUntilMs) {
        @Override
        public String toString() {
            return String.format("after the SIGKILL (ms): replica promoted %d, killed node restarted %d and replicating %d;"
                    + " 503s from %d to %d; readiness DOWN from %d to %d; %s", promotedAfterMs, restartedAfterMs,
                    replicatingAfterMs, first503AfterMs, last503AfterMs, notReadyFromMs, notReadyUntilMs, report);
        }
    }

    /** Polls readiness every 50 ms: when it was first and last seen DOWN after the kill (-1: never). */
    private static final class ReadinessWatch implements AutoCloseable {
        private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        private final AtomicLong firstDown = new AtomicLong();
        private final AtomicLong lastDown = new AtomicLong();

        ReadinessWatch(URI ready) {
            timer.scheduleWithFixedDelay(() -> {
                int status;
                try {
                    status = http.send(HttpRequest.newBuilder(ready).timeout(Duration.ofSeconds(3)).GET().build(),
                            HttpResponse.BodyHandlers.discarding()).statusCode();
                } catch (InterruptedException stopped) {
                    return; // the watch was closed mid-poll: not an answer of the service
                } catch (Exception e) {
                    status = -1;
                }
                if (status != 200) {
                    long now = System.nanoTime();
                    firstDown.compareAndSet(0, now);
                    lastDown.set(now);
                }
            }, 0, 50, TimeUnit.MILLISECONDS);
        }

        long firstDownAfter(long nanos) {
            return firstDown.get() == 0 ? -1 : (firstDown.get() - nanos) / 1_000_000;
        }

        long lastDownAfter(long nanos) {
            return lastDown.get() == 0 ? -1 : (lastDown.get() - nanos) / 1_000_000;
        }

        @Override
        public void close() {
            timer.shutdownNow();
        }
    }

    public static Result run(URI base, URI ready, String name, Supplier<RedisNodes.Node> primary,
            ToLongFunction<RedisNodes.Node> failOver, Consumer<RedisNodes.Node> restart) throws Exception {
        FailoverLoad load = new FailoverLoad(base, Api.unique(name), LCIDS, LEASE_MS).start(CLIENTS);
        Thread.sleep(3000);
        assertThat(load.answered()).as("load flowing before the failover").isGreaterThan(100);
        RedisNodes.Node victim = primary.get();
        ReadinessWatch readiness = new ReadinessWatch(ready);
        long killedAt = System.nanoTime();
        long promoted = failOver.applyAsLong(victim);
        Thread.sleep(2000);
        long restarted = millisSince(killedAt);
        restart.accept(victim);
        long replicating = millisSince(killedAt);
        Thread.sleep(4000);
        load.stop();
        readiness.close();
        load.drain(Duration.ofSeconds(60));
        Result result = new Result(load.verify(), promoted, restarted, replicating,
                load.first503Nanos() == 0 ? -1 : (load.first503Nanos() - killedAt) / 1_000_000,
                load.last503Nanos() == 0 ? -1 : (load.last503Nanos() - killedAt) / 1_000_000,
                readiness.firstDownAfter(killedAt), readiness.lastDownAfter(killedAt));
        System.out.println("failover drill " + name + ": " + result);
        return result;
    }

    private static long millisSince(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }
}
