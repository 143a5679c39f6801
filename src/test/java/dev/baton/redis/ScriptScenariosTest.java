package dev.baton.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.baton.ops.EmbeddedRedis;
import dev.baton.testing.RedisTestResource;
import io.vertx.core.Vertx;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.Request;

/**
 * The scripts on their own, on a real redis-server, without the service or HTTP: each state
 * change's transitions, the stats tail the service reads, the claim-index scripts, and the
 * loader. The HTTP scenario tests check the same protocol from a client's side.
 */
class ScriptScenariosTest {

    private static final long LEASE = 30_000;
    private static final long KEEP = 3_600_000;
    private static final long PICKUP = 5_000;

    private static EmbeddedRedis embedded;
    private static Vertx vertx;
    private static RedisConnection redis;

    @BeforeAll
    static void startRedis() throws Exception {
        String url = RedisTestResource.externalUrl();
        if (url == null) {
            embedded = EmbeddedRedis.start();
            url = embedded.url();
        }
        vertx = Vertx.vertx();
        redis = Redis.createClient(vertx, url).connect().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stopRedis() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
        if (embedded != null) {
            embedded.stop();
        }
    }

    @Test
    void given_a_free_lcid_when_acquired_then_granted_and_a_second_request_queues_behind_it() {
        LockKeys lcid = newLcid();

        Reply first = run(lcid, acquire("r1", "t1"));
        Reply second = run(lcid, acquire("r2", "t2"));
        Reply replay = run(lcid, acquire("r1", "t-other"));

        assertThat(first.text(0)).isEqualTo("ACQUIRED");
        assertThat(first.text(1)).isEqualTo("t1");
        assertThat(first.stats().claimIndexAt()).isGreaterThan(0);
        assertThat(second.text(0)).isEqualTo("QUEUED");
        assertThat(second.number(1)).isEqualTo(1);
        assertThat(second.stats().claimIndexAt()).isEqualTo(-1);
        assertThat(replay.text(0)).isEqualTo("ACQUIRED");
        assertThat(replay.text(1)).isEqualTo("t1");
        assertThat(replay.text(2)).isEqualTo(first.text(2));
    }

    @Test
    void given_a_holder_with_a_waiter_when_it_completes_then_the_waiter_is_handed_over_with_a_higher_fence_and_a_retry_pops_nothing() {
        LockKeys lcid = newLcid();
        Reply granted = run(lcid, acquire("r1", "t1"));
        run(lcid, acquire("r2", "t2"));

        Reply next = run(lcid, new ScriptCall.Complete("t1", "r1", "{\"ok\":true}", KEEP, KEEP, false, "turn-token", PICKUP));
        Reply retried = run(lcid, new ScriptCall.Complete("t1", "r1", "{\"ok\":true}", KEEP, KEEP, false, "turn-token", PICKUP));
        Reply released = run(lcid, new ScriptCall.Complete("t1", "r2", null, KEEP, KEEP, false, "turn-token", PICKUP));

        assertThat(next.text(0)).isEqualTo("NEXT");
        assertThat(next.text(1)).isEqualTo("t1");
        assertThat(next.text(5)).isEqualTo("r2");
        assertThat(next.number(2)).isGreaterThan(granted.number(2));
        assertThat(next.stats().holdMs()).isGreaterThanOrEqualTo(0);
        assertThat(retried.text(5)).isEqualTo("r2");
        assertThat(retried.number(2)).isEqualTo(next.number(2));
        assertThat(released.text(0)).isEqualTo("RELEASED");
        assertThat(command(Command.PTTL, lcid.state()).toLong()).isPositive();
    }

    @Test
    void given_a_holder_when_it_shortens_its_lease_then_the_claim_index_is_told_with_a_newer_version() {
        LockKeys lcid = newLcid();
        Reply granted = run(lcid, acquire("r1", "t1"));

        Reply longer = run(lcid, new ScriptCall.Heartbeat("t1", 60_000L));
        Reply shorter = run(lcid, new ScriptCall.Heartbeat("t1", 1_000L));
        Reply lost = run(lcid, new ScriptCall.Heartbeat("not-the-token", null));

        assertThat(longer.stats().claimIndexAt()).isEqualTo(-1);
        assertThat(shorter.stats().claimIndexAt()).isEqualTo(shorter.number(3));
        assertThat(shorter.stats().claimIndexVersion()).isGreaterThan(granted.stats().claimIndexVersion());
        assertThat(lost.text(0)).isEqualTo("LOCK_LOST");
    }

    @Test
    void given_a_holder_with_a_waiter_when_it_aborts_then_the_lcid_is_claimable_now_and_claim_hands_out_the_waiter() {
        LockKeys lcid = newLcid();
        Reply granted = run(lcid, acquire("r1", "t1"));
        run(lcid, acquire("r2", "t2"));

        Reply aborted = run(lcid, new ScriptCall.Abort("r1", "t1", false, "bad input", 5, KEEP, KEEP, KEEP, "turn-token", PICKUP));
        Reply seen = run(lcid, new ScriptCall.ClaimInspect());
        Reply claimed = run(lcid, new ScriptCall.Claim("t3", LEASE, 5, KEEP, KEEP, KEEP, PICKUP));
        Reply busy = run(lcid, new ScriptCall.Claim("t4", LEASE, 5, KEEP, KEEP, KEEP, PICKUP));

        assertThat(aborted.text(0)).isEqualTo("RELEASED");
        assertThat(aborted.number(1)).isEqualTo(1);
        assertThat(aborted.stats().claimIndexAt()).isLessThan(granted.stats().claimIndexAt());
        assertThat(aborted.stats().claimIndexVersion()).isGreaterThan(granted.stats().claimIndexVersion());
        assertThat(seen.text(0)).isEqualTo("CLAIMABLE");
        assertThat(claimed.text(0)).isEqualTo("NEXT");
        assertThat(claimed.text(5)).isEqualTo("r2");
        assertThat(busy.text(0)).isEqualTo("BUSY");
        assertThat(Long.parseLong(busy.text(2))).isEqualTo(claimed.stats().claimIndexVersion());
    }

    @Test
    void given_a_queued_request_when_withdrawn_then_it_leaves_the_queue_and_a_second_withdraw_is_answered_the_same() {
        LockKeys lcid = newLcid();
        run(lcid, acquire("r1", "t1"));
        run(lcid, acquire("r2", "t2"));

        Reply withdrawn = run(lcid, new ScriptCall.Abort("r2", null, false, null, 5, KEEP, KEEP, KEEP, "turn-token", PICKUP));
        Reply again = run(lcid, new ScriptCall.Abort("r2", null, false, null, 5, KEEP, KEEP, KEEP, "turn-token", PICKUP));
        Reply active = run(lcid, new ScriptCall.Abort("r1", null, false, null, 5, KEEP, KEEP, KEEP, "turn-token", PICKUP));

        assertThat(withdrawn.text(0)).isEqualTo("RELEASED");
        assertThat(withdrawn.number(1)).isZero();
        assertThat(again.text(0)).isEqualTo("RELEASED");
        assertThat(active.text(0)).isEqualTo("NOT_QUEUED");
        assertThat(active.text(1)).isEqualTo("ACTIVE");
    }

    @Test
    void given_a_request_out_of_attempts_when_its_holder_requeues_it_then_it_is_dead_and_retry_queues_it_again() {
        LockKeys lcid = newLcid();
        run(lcid, acquire("r1", "t1"));

        Reply dead = run(lcid, new ScriptCall.Abort("r1", "t1", true, "crashed", 1, KEEP, KEEP, KEEP, "turn-token", PICKUP));
        Reply view = run(lcid, new ScriptCall.ViewDead("r1"));
        Reply retried = run(lcid, new ScriptCall.Retry("r1", 1000, KEEP));

        assertThat(dead.stats().dead()).isOne();
        assertThat(dead.stats().deadRequestIds()).containsExactly("r1");
        assertThat(view.text(0)).isEqualTo("DEAD");
        assertThat(view.text(2)).isEqualTo("crashed");
        assertThat(retried.text(0)).isEqualTo("QUEUED");
        assertThat(retried.stats().claimIndexAt()).isPositive();
    }

    @Test
    void given_claim_index_hints_when_an_older_version_arrives_late_then_the_newer_hint_stays_and_an_older_drop_is_refused() {
        String tenant = "t-" + unique();
        List<String> keys = List.of(IndexKeys.claimable(tenant), IndexKeys.claimableVersions(tenant));

        eval(LuaScript.CLAIM_INDEX_SET, keys, List.of("order-1", "1000", "20"));
        eval(LuaScript.CLAIM_INDEX_SET, keys, List.of("order-1", "9000", "10"));
        eval(LuaScript.CLAIM_INDEX_DROP, keys, List.of("order-1", "15"));

        assertThat(command(Command.ZSCORE, keys.get(0), "order-1").toLong()).isEqualTo(1000);
        eval(LuaScript.CLAIM_INDEX_DROP, keys, List.of("order-1", "20"));
        assertThat(command(Command.ZSCORE, keys.get(0), "order-1")).isNull();
        assertThat(command(Command.HEXISTS, keys.get(1), "order-1").toInteger()).isZero();
    }

    @Test
    void given_due_claim_entries_of_two_prefixes_when_looking_for_one_prefix_then_only_its_lcids_come_oldest_first_within_the_scan_bound() {
        String index = IndexKeys.claimable("t-" + unique());
        for (int i = 0; i < 150; i++) {
            command(Command.ZADD, index, Integer.toString(1 + i), "invoice-" + i);
        }
        command(Command.ZADD, index, "200", "order-b", "201", "order-a", "202", "order-c");
        command(Command.ZADD, index, "99999999999999", "order-later"); // not due

        io.vertx.redis.client.Response all = eval(LuaScript.INDEX_DUE, List.of(index), List.of("16", "order-", "1000"));
        io.vertx.redis.client.Response two = eval(LuaScript.INDEX_DUE, List.of(index), List.of("2", "order-", "1000"));
        io.vertx.redis.client.Response bounded = eval(LuaScript.INDEX_DUE, List.of(index), List.of("16", "order-", "150"));
        io.vertx.redis.client.Response edge = eval(LuaScript.INDEX_DUE, List.of(index), List.of("16", "order-", "151"));
        io.vertx.redis.client.Response none = eval(LuaScript.INDEX_DUE, List.of(index), List.of("16", "shipment-", "1000"));
        io.vertx.redis.client.Response unprefixed = eval(LuaScript.INDEX_DUE, List.of(index), List.of("3"));

        assertThat(members(all)).containsExactly("order-b", "order-a", "order-c");
        assertThat(all.get(1).toLong()).isEqualTo(200);
        assertThat(members(two)).containsExactly("order-b", "order-a");
        assertThat(members(bounded)).isEmpty();
        assertThat(members(edge)).containsExactly("order-b");
        assertThat(members(none)).isEmpty();
        assertThat(members(unprefixed)).containsExactly("invoice-0", "invoice-1", "invoice-2");
    }

    @Test
    void given_a_holder_when_it_renews_its_lease_then_the_stats_say_how_far_into_the_lease_it_was() throws InterruptedException {
        LockKeys lcid = newLcid();
        run(lcid, new ScriptCall.Acquire("r1", "t1", 1_000, null, 1000, 5, KEEP, KEEP, KEEP, false, PICKUP));

        Reply early = run(lcid, new ScriptCall.Heartbeat("t1", null));
        Thread.sleep(600);
        Reply late = run(lcid, new ScriptCall.Heartbeat("t1", 4_000L));
        Reply lost = run(lcid, new ScriptCall.Heartbeat("not-the-token", null));

        assertThat(early.stats().renewedLeaseMs()).isEqualTo(1_000);
        assertThat(early.stats().renewedAfterMs()).isBetween(0L, 400L);
        assertThat(early.stats().renewedLate()).isFalse();
        assertThat(late.stats().renewedLeaseMs()).isEqualTo(1_000);
        assertThat(late.stats().renewedAfterMs()).isBetween(600L, 1_000L);
        assertThat(late.stats().renewedLate()).isTrue();
        assertThat(lost.stats().renewedLeaseMs()).isEqualTo(-1);
        assertThat(lost.stats().renewedLate()).isFalse();
    }

    private static List<String> members(io.vertx.redis.client.Response flat) {
        List<String> members = new java.util.ArrayList<>();
        for (int i = 0; i < flat.size(); i += 2) {
            members.add(flat.get(i).toString());
        }
        return members;
    }

    @Test
    void given_the_loader_then_each_helper_comes_in_once_and_a_cycle_is_refused() {
        String acquire = LuaScript.ACQUIRE.source();

        assertThat(acquire.split("local function clock\\(", -1)).hasSize(2);
        assertThat(acquire.split("local K_STATE", -1)).hasSize(2);
        assertThat(acquire).doesNotContain("@include");
        assertThatThrownBy(() -> LuaSource.load("includes/test_cycle_a")).hasMessageContaining("cycle");
    }

    @Test
    void given_a_script_error_then_it_names_the_helper_file_and_line() {
        LockKeys lcid = newLcid();
        // A lease that is not a number fails where the lease is added to the clock, in a helper.
        Throwable error = evalFailure(LuaScript.ACQUIRE, lcid.asList(), List.of("r1", "t1", "not-a-number", "", "1000",
                "5", "1", "1", "1", "handoff", "5000"));

        String located = ScriptRunner.located(LuaScript.ACQUIRE, error).getMessage();

        assertThat(located).contains("at includes/grant.lua:");
        int line = Integer.parseInt(located.replaceAll("(?s).* at includes/grant\\.lua:(\\d+):.*", "$1"));
        String helper = new String(readResource("/lua/includes/grant.lua")).split("\n")[line - 1];
        assertThat(helper).contains("lease");
    }

    private static ScriptCall.Acquire acquire(String requestId, String token) {
        return new ScriptCall.Acquire(requestId, token, LEASE, null, 1000, 5, KEEP, KEEP, KEEP, false, PICKUP);
    }

    private static LockKeys newLcid() {
        return LockKeys.of("scripts", "order-" + unique());
    }

    private static String unique() {
        return UUID.randomUUID().toString().substring(0, 12);
    }

    private static Reply run(LockKeys keys, ScriptCall call) {
        return new Reply(io.vertx.mutiny.redis.client.Response.newInstance(eval(call.script(), keys.asList(), call.argv())));
    }

    private static io.vertx.redis.client.Response eval(LuaScript script, List<String> keys, List<String> args) {
        Request request = Request.cmd(Command.EVAL).arg(script.source()).arg(keys.size());
        keys.forEach(request::arg);
        args.forEach(request::arg);
        return await(redis.send(request));
    }

    private static Throwable evalFailure(LuaScript script, List<String> keys, List<String> args) {
        try {
            eval(script, keys, args);
        } catch (RuntimeException e) {
            return e.getCause() != null ? e.getCause() : e;
        }
        throw new AssertionError("the script did not fail");
    }

    private static io.vertx.redis.client.Response command(Command command, String... args) {
        Request request = Request.cmd(command);
        for (String arg : args) {
            request.arg(arg);
        }
        return await(redis.send(request));
    }

    private static io.vertx.redis.client.Response await(io.vertx.core.Future<io.vertx.redis.client.Response> future) {
        try {
            return future.toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] readResource(String path) {
        try (var in = ScriptScenariosTest.class.getResourceAsStream(path)) {
            return in.readAllBytes();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
