package dev.baton.failover;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import dev.baton.redis.LockKeys;
import dev.baton.testing.Api;
import dev.baton.testing.Metrics;
import dev.baton.testing.RedisNodes;
import dev.baton.testing.ReplicaPairResource;
import dev.baton.testing.ReplicasAckedProfile;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import redis.clients.jedis.Jedis;

/**
 * Durable acknowledgements (baton.backend.replicas-acked=1) on a primary with one replica: an
 * answer that acknowledges a change comes only once the replica has it; a replica that does not
 * confirm in time turns the answer into 503, and the retry of the same call gets the answer.
 */
@QuarkusTest
@WithTestResource(ReplicaPairResource.class)
@TestProfile(ReplicasAckedProfile.class)
class ReplicasAckedScenariosTest {

    @TestHTTPResource(value = "/metrics", management = true)
    URI metrics;

    @Test
    void given_a_replica_that_confirms_when_a_request_is_acquired_and_queued_then_both_are_on_the_replica_when_answered() {
        String lcid = Api.unique("acked");
        String token = acquire(lcid, "r1").then().statusCode(200).body("status", equalTo("ACQUIRED")).extract()
                .path("token");
        acquire(lcid, "r2").then().statusCode(202).body("status", equalTo("QUEUED"));
        try (Jedis replica = ReplicaPairResource.replica().jedis()) {
            // Read where the layout keeps them (docs/internals/redis-layout.md): the lock's first two
            // parts are its token and its active request.
            LockKeys keys = LockKeys.of("default", lcid);
            String lock = replica.hget(keys.state(), "lock");
            assertThat(lock).as("the grant to r1 on the replica").startsWith(token + " r1 ");
            assertThat(replica.lrange(keys.queue(), 0, -1)).as("the queued r2 on the replica").containsExactly("r2");
        }
    }

    @Test
    void given_many_concurrent_changes_then_they_share_waits_and_each_is_on_the_replica_when_answered()
            throws Exception {
        int changes = 48;
        List<String> lcids = new ArrayList<>();
        for (int i = 0; i < changes; i++) {
            lcids.add(Api.unique("group"));
        }
        try (Jedis primary = ReplicaPairResource.primary().jedis()) {
            primary.configResetStat();
        }
        ExecutorService pool = Executors.newFixedThreadPool(changes);
        RedisNodes.Node replica = ReplicaPairResource.replica();
        CountDownLatch gate = new CountDownLatch(1);
        AtomicInteger sent = new AtomicInteger();
        List<Future<String>> answers = new ArrayList<>();
        for (String lcid : lcids) {
            answers.add(pool.submit(() -> {
                gate.await();
                sent.incrementAndGet();
                String token = acquireUntilAnswered(lcid);
                // Answered, so the replica must have it already.
                try (Jedis onReplica = ReplicaPairResource.replica().jedis()) {
                    return onReplica.hget(LockKeys.of("default", lcid).state(), "lock").startsWith(token + " r1 ")
                            ? "on replica" : "missing";
                }
            }));
        }
        // A replica slow for a moment, within replicas-timeout: writes answered meanwhile wait
        // behind the WAIT in flight and share the next one. Every caller starts at once (their
        // threads are already running), and the pause lasts until all of them have sent.
        replica.pause();
        try {
            gate.countDown();
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
            while (sent.get() < changes && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            Thread.sleep(100);
        } finally {
            replica.resume();
        }
        for (Future<String> answer : answers) {
            assertThat(answer.get(10, TimeUnit.SECONDS)).isEqualTo("on replica");
        }
        pool.shutdown();
        try (Jedis primary = ReplicaPairResource.primary().jedis()) {
            String stats = primary.info("commandstats");
            long scripts = calls(stats, "evalsha");
            long waits = calls(stats, "wait");
            assertThat(scripts).isGreaterThanOrEqualTo(changes);
            // What group commit guarantees: writes answered while a WAIT is in flight share the next
            // one, so a burst costs fewer WAITs than writes. How many fewer depends on scheduling:
            // bench/replicas-acked prints the ratio under load.
            assertThat(waits).as("WAITs for %d scripts of %d concurrent changes", scripts, changes).isLessThan(scripts);
            System.out.printf("group commit: %d WAITs for %d scripts of %d changes%n", waits, scripts, changes);
        }
    }

    /**
     * The protocol's retry rule: a 503 (the replica did not confirm within replicas-timeout, on a
     * machine slow enough to stretch the pause) is answered by sending the same call again.
     */
    private static String acquireUntilAnswered(String lcid) throws InterruptedException {
        for (int attempt = 1;; attempt++) {
            Response answer = acquire(lcid, "r1");
            if (answer.statusCode() != 503 || attempt == 20) {
                return answer.then().statusCode(200).extract().path("token");
            }
            Thread.sleep(50);
        }
    }

    /** calls= of one command in INFO commandstats. */
    private static long calls(String commandStats, String command) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("cmdstat_" + command + ":calls=(\\d+)")
                .matcher(commandStats);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    @Test
    void given_a_stalled_replica_when_a_change_is_asked_for_then_503_with_retry_after_and_the_retry_after_it_recovers_gets_the_answer() {
        String lcid = Api.unique("stalled");
        Metrics before = Metrics.scrape(metrics.toString());
        RedisNodes.Node replica = ReplicaPairResource.replica();
        replica.pause();
        try {
            long started = System.nanoTime();
            Response refused = acquire(lcid, "r1");
            long tookMs = (System.nanoTime() - started) / 1_000_000;
            refused.then().statusCode(503).header("Retry-After", equalTo("1"))
                    .body("code", equalTo("BACKEND_UNAVAILABLE")).body("detail", containsString("replicas"));
            assertThat(tookMs).as("answered after the replicas timeout, before the backend timeout")
                    .isBetween(450L, 1400L);
            acquire(lcid, "r2").then().statusCode(503);
            // Reads do not wait for replicas.
            Api.client().get("/v1/locks/{lcid}", lcid).then().statusCode(200);
        } finally {
            replica.resume();
        }
        assertThat(Metrics.scrape(metrics.toString()).delta(before, "baton_replica_ack_timeouts_total"))
                .isGreaterThanOrEqualTo(2);

        // The same calls again, as the protocol's retry rule says: the answers they were refused.
        String token = acquire(lcid, "r1").then().statusCode(200).body("status", equalTo("ACQUIRED"))
                .extract().path("token");
        acquire(lcid, "r2").then().statusCode(202).body("status", equalTo("QUEUED")).body("position", equalTo(1));
        complete(lcid, fields("token", token, "requestId", "r1")).then().statusCode(200)
                .body("status", equalTo("NEXT")).body("request.requestId", equalTo("r2"));
    }

    @Test
    void given_a_primary_that_forgot_its_scripts_when_a_change_is_asked_for_then_the_script_is_sent_again_and_answered() {
        // A promoted replica has no scripts cached: NOSCRIPT comes before any WAIT is sent (on a
        // Cluster, inside the batch of the script and its WAIT, as the client's batch error).
        String lcid = Api.unique("forgot");
        try (Jedis primary = ReplicaPairResource.primary().jedis()) {
            primary.scriptFlush();
        }
        String token = acquire(lcid, "r1").then().statusCode(200).body("status", equalTo("ACQUIRED"))
                .extract().path("token");
        complete(lcid, fields("token", token, "requestId", "r1")).then().statusCode(200)
                .body("status", equalTo("RELEASED"));
    }
}
