package dev.baton.testing;

import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;

/**
 * A worker that only calls POST /v1/claims and runs the holder loop on whatever it is given.
 * What it processed is listed as {@code lcid/requestId#attempt}, in order. Orphans left by other
 * test classes may be claimed too.
 */
public final class ClaimWorker {

    private ClaimWorker() {
    }

    public static Response claim() {
        return claim(1);
    }

    /** A claim that asks for up to {@code take} queued requests at once (batch handoff). */
    public static Response claim(int take) {
        return client().body(fields("leaseMs", 10000, "take", take)).post("/v1/claims");
    }

    /**
     * Claims until the claim hands out {@code lcid}, and answers that claim; the work of other
     * lcids claimed on the way is done (completed). Fails when claims stay dry for 3 s: the claim
     * index learns of an lcid after the script that made it claimable, within the hint batch
     * window (baton.claims.hint-batch), so a claim sent at once may still answer 204, and one claim
     * looks at a bounded number of due entries, which other tests' leftovers may fill.
     */
    public static JsonPath claimOf(String lcid) {
        return claimOf(lcid, 1);
    }

    /** {@link #claimOf(String)} with claims that take up to {@code take} requests at once. */
    public static JsonPath claimOf(String lcid, int take) {
        long dryUntil = 0;
        for (int claims = 0; claims < 1000; claims++) {
            Response claimed = claim(take);
            if (claimed.statusCode() == 204) {
                long now = System.nanoTime();
                if (dryUntil == 0) {
                    dryUntil = now + Duration.ofSeconds(3).toNanos();
                } else if (now > dryUntil) {
                    throw new AssertionError("claims stayed dry for 3 s before handing out " + lcid);
                }
                sleep(20);
                continue;
            }
            dryUntil = 0;
            JsonPath r = claimed.then().statusCode(200).extract().jsonPath();
            if (lcid.equals(r.getString("lcid"))) {
                return r;
            }
            finish(r);
        }
        throw new AssertionError("claims never handed out " + lcid);
    }

    /**
     * Claims and completes until a claim answers 204: a clean-up of what is claimable now. An lcid
     * made claimable a moment ago may not be in the claim index yet (its hint lands within the
     * hint-batch window): to wait for one, use {@link #claimOf} or {@link #drainForOneSecond}.
     */
    public static List<String> drain() {
        List<String> processed = new ArrayList<>();
        for (int claims = 0; claims < 500; claims++) {
            Response claimed = claim();
            if (claimed.statusCode() == 204) {
                return processed;
            }
            JsonPath r = claimed.then().statusCode(200).extract().jsonPath();
            if (!"NEXT".equals(r.getString("status"))) {
                throw new AssertionError("a claim answered " + r.getString("status"));
            }
            processed.addAll(finish(r));
        }
        throw new AssertionError("claims never ran dry");
    }

    /** The holder loop from a NEXT answer on: completes each request (or batch) it is handed. */
    private static List<String> finish(JsonPath next) {
        List<String> processed = new ArrayList<>();
        String lcid = next.getString("lcid");
        JsonPath r = next;
        while (r.getString("status").equals("NEXT")) {
            List<String> batch = r.getList("requests.requestId", String.class);
            List<Integer> attempts = r.getList("requests.attempt", Integer.class);
            for (int i = 0; i < batch.size(); i++) {
                processed.add(lcid + "/" + batch.get(i) + "#" + attempts.get(i));
            }
            Response done = batch.size() == 1 ? complete(lcid, r.getString("token"), batch.get(0))
                    : complete(lcid, fields("token", r.getString("token"), "completed",
                            batch.stream().map(id -> java.util.Map.of("requestId", id)).toList()));
            r = done.then().statusCode(200).extract().jsonPath();
        }
        return processed;
    }

    /**
     * Claims as a worker polling claims would, doing what it is handed, until {@code reached}
     * holds; answers what it was handed of {@code lcid}. {@code reached} is looked at after every
     * claim and before that claim's work is done: other tests' leftovers in the shared tenant can
     * take long, and a turn granted meanwhile must not run out of its pick-up window here.
     */
    public static List<String> claimUntil(String lcid, java.util.function.BooleanSupplier reached) {
        List<String> mine = new ArrayList<>();
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < until) {
            Response claimed = claim();
            if (reached.getAsBoolean()) {
                // What this last claim handed out is left to its lease: another claim redoes it.
                if (claimed.statusCode() == 200 && lcid.equals(claimed.jsonPath().getString("lcid"))) {
                    mine.add(lcid + "/" + claimed.jsonPath().getString("request.requestId") + "#"
                            + claimed.jsonPath().getInt("request.attempt"));
                }
                return mine;
            }
            if (claimed.statusCode() == 200) {
                JsonPath r = claimed.then().extract().jsonPath();
                finish(r).stream().filter(done -> done.startsWith(lcid + "/")).forEach(mine::add);
            }
        }
        throw new AssertionError("not reached within 30 s of claims on " + lcid);
    }

    /**
     * Drains again and again for one second, as a worker polling claims: what it got of the
     * given lcids within that second (other lcids' work, left by other tests, is done but not listed).
     */
    public static List<String> drainForOneSecond(String... lcids) throws InterruptedException {
        List<String> mine = java.util.Arrays.stream(lcids).map(lcid -> lcid + "/").toList();
        return drainForOneSecond().stream().filter(done -> mine.stream().anyMatch(done::startsWith)).toList();
    }

    private static List<String> drainForOneSecond() throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(1).toNanos();
        List<String> processed = new ArrayList<>();
        while (System.nanoTime() < until) {
            List<String> drained = drain();
            processed.addAll(drained);
            if (drained.isEmpty()) {
                Thread.sleep(20);
            }
        }
        return processed;
    }

    /**
     * The continuous claim poller of docs/claims-and-dead-letters.md, for {@code duration}: claim
     * with {@code lcidPrefix}; on work, do it and claim again at once; on 204, wait a little and
     * claim again. Answers everything it processed, in order, whatever lcid it came from.
     */
    public static List<String> pollWithPrefix(String lcidPrefix, Duration duration) {
        List<String> processed = new ArrayList<>();
        long until = System.nanoTime() + duration.toNanos();
        while (System.nanoTime() < until) {
            Response claimed = client().body(fields("leaseMs", 10000, "lcidPrefix", lcidPrefix)).post("/v1/claims");
            if (claimed.statusCode() == 204) {
                sleep(20 + java.util.concurrent.ThreadLocalRandom.current().nextInt(30));
                continue;
            }
            processed.addAll(finish(claimed.then().statusCode(200).extract().jsonPath()));
        }
        return processed;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while claiming", e);
        }
    }
}
