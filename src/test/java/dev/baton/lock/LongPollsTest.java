package dev.baton.lock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.baton.redis.ScriptStats;
import dev.baton.redis.Wakeups;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;

/**
 * The long-poll registry's own rules, on a state the test flips (the scenarios on real Redis are
 * LongPollScenariosTest): when a held call is answered, what is counted, and what the cap and a
 * shutdown do. Re-checks every 200 ms here.
 */
class LongPollsTest {

    private static final String KEY = Wakeups.key("t", "order-1", "r1");

    /** The events the registry reports. */
    static final class Recorded implements LockEvents {
        final List<Duration> woken = new ArrayList<>();
        final AtomicInteger missed = new AtomicInteger();

        @Override
        public void completed(Operation operation, CallContext call, Duration took, Outcome outcome,
                Throwable failure, ScriptStats stats, boolean byHolder) {
        }

        @Override
        public synchronized void longPollWoken(Duration took) {
            woken.add(took);
        }

        @Override
        public void longPollMissedWake() {
            missed.incrementAndGet();
        }
    }

    private final Recorded events = new Recorded();
    private final AtomicReference<String> state = new AtomicReference<>("QUEUED");
    private final AtomicInteger checks = new AtomicInteger();
    private LongPolls polls;

    private LongPolls polls(int cap) {
        polls = new LongPolls(new Wakeups(null), 200, cap, events);
        return polls;
    }

    @AfterEach
    void close() {
        polls.close();
    }

    private CompletableFuture<String> hold(long waitMs) {
        CompletableFuture<String> answer = new CompletableFuture<>();
        polls.hold(KEY, waitMs, () -> Uni.createFrom().item(() -> {
            checks.incrementAndGet();
            return state.get();
        }), "DONE"::equals).subscribe().with(answer::complete, answer::completeExceptionally);
        return answer;
    }

    @Test
    void given_a_held_call_when_a_wake_up_arrives_after_the_change_then_it_is_answered_at_once_and_the_latency_recorded()
            throws Exception {
        polls(10);
        CompletableFuture<String> answer = hold(10_000);
        assertThat(polls.open()).isEqualTo(1);
        Thread.sleep(50);
        assertThat(answer).isNotDone();

        state.set("DONE");
        long woken = System.nanoTime();
        polls.woken(KEY);

        assertThat(answer.get(1, TimeUnit.SECONDS)).isEqualTo("DONE");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - woken)).isLessThan(100);
        assertThat(events.woken).hasSize(1);
        assertThat(events.missed).hasValue(0);
        assertThat(polls.open()).isZero();
    }

    @Test
    void given_a_held_call_when_its_state_changes_and_no_wake_up_comes_then_the_recheck_answers_it_and_counts_a_missed_wake_up()
            throws Exception {
        polls(10);
        CompletableFuture<String> answer = hold(10_000);
        Thread.sleep(50);
        state.set("DONE");
        long changed = System.nanoTime();

        assertThat(answer.get(2, TimeUnit.SECONDS)).isEqualTo("DONE");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - changed)).isLessThan(400); // 200 ms re-check
        assertThat(events.missed).hasValue(1);
        assertThat(events.woken).isEmpty();
    }

    @Test
    void given_a_held_call_when_a_wake_up_for_another_request_arrives_then_it_stays_held_and_is_not_checked()
            throws Exception {
        polls(10);
        CompletableFuture<String> answer = hold(10_000);
        int before = checks.get();
        polls.woken(Wakeups.key("t", "order-1", "r2"));
        polls.woken(Wakeups.key("other", "order-1", "r1"));
        assertThat(checks.get()).isEqualTo(before);
        assertThat(answer).isNotDone();
    }

    @Test
    void given_nothing_changes_when_wait_ms_passes_then_the_last_check_is_the_answer() throws Exception {
        polls(10);
        long start = System.nanoTime();
        CompletableFuture<String> answer = hold(500);

        assertThat(answer.get(2, TimeUnit.SECONDS)).isEqualTo("QUEUED");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(480L, 1500L);
        // The first check, two or three re-checks, the check at the deadline: about one per re-check interval.
        assertThat(checks.get()).isBetween(3, 5);
        assertThat(events.missed).hasValue(0);
    }

    @Test
    void given_the_cap_is_reached_then_further_calls_are_answered_at_once() throws Exception {
        polls(2);
        hold(10_000);
        hold(10_000);
        assertThat(polls.open()).isEqualTo(2);

        assertThat(hold(10_000).get(1, TimeUnit.SECONDS)).isEqualTo("QUEUED");
        assertThat(polls.open()).isEqualTo(2);
    }

    @Test
    void given_held_calls_when_the_replica_shuts_down_then_each_is_answered_at_once_and_new_ones_are_not_held()
            throws Exception {
        polls(10);
        List<CompletableFuture<String>> answers = List.of(hold(20_000), hold(20_000), hold(20_000));
        Thread.sleep(50);

        polls.shuttingDown(null);

        for (CompletableFuture<String> answer : answers) {
            assertThat(answer.get(1, TimeUnit.SECONDS)).isEqualTo("QUEUED");
        }
        assertThat(hold(20_000).get(1, TimeUnit.SECONDS)).isEqualTo("QUEUED");
        assertThat(polls.open()).isZero();
    }

    @Test
    void given_a_held_call_when_its_client_hangs_up_then_it_is_dropped_and_never_checked_again() throws Exception {
        polls(10);
        Cancellable call = polls.hold(KEY, 10_000, () -> Uni.createFrom().item(() -> {
            checks.incrementAndGet();
            return state.get();
        }), "DONE"::equals).subscribe().with(ignored -> {
        });
        Thread.sleep(50);

        call.cancel();
        int after = checks.get();
        polls.woken(KEY);
        Thread.sleep(500);

        assertThat(polls.open()).isZero();
        assertThat(checks.get()).isEqualTo(after);
    }

    @Test
    void given_a_held_call_when_a_check_answers_a_problem_then_the_call_ends_with_it() throws Exception {
        polls(10);
        AtomicInteger calls = new AtomicInteger();
        CompletableFuture<String> answer = new CompletableFuture<>();
        polls.hold(KEY, 10_000, () -> calls.incrementAndGet() == 1 ? Uni.createFrom().item("QUEUED")
                : Uni.createFrom().<String> failure(LockProblem.of(ProblemCode.NOT_FOUND, "gone")),
                "DONE"::equals).subscribe().with(answer::complete, answer::completeExceptionally);

        polls.woken(KEY);

        assertThat(answer).failsWithin(Duration.ofSeconds(1)).withThrowableThat()
                .havingRootCause().isInstanceOf(LockProblem.class);
    }
}
