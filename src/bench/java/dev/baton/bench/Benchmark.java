package dev.baton.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import javax.imageio.ImageIO;

import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.baton.redis.LockKeys;
import dev.baton.redis.ScriptCall;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisAPI;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;

/**
 * Drives a running Baton over HTTP (many concurrent keep-alive clients, the real protocol) and,
 * in the same run, its Lua scripts directly on Redis and a hand-written spin-retry lock, then
 * prints throughput and latency percentiles as JSON and draws throughput and p99 against
 * concurrency. See docs/performance.md for the command.
 */
public final class Benchmark {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Vertx vertx = Vertx.vertx();
    private final String host;
    private final int port;
    private final String redisUrl;
    private final long seconds;
    private final String apiKey;
    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final AtomicLong scenarioRuns = new AtomicLong();
    private volatile Map<String, CompletableFuture<Void>> lastSignals = Map.of();
    private final AtomicLong lastProcessed = new AtomicLong();
    private final String servicePid;
    /** etcd's gRPC gateway (http://host:2379), for the comparison with its lock API; null: skipped. */
    private final String etcdUrl;
    private String redisPid;
    private CpuSnapshot scenarioCpu;

    private Map<String, CompletableFuture<Void>> signals() {
        return lastSignals;
    }

    private Benchmark(Map<String, String> args) {
        java.net.URI url = java.net.URI.create(args.getOrDefault("url", "http://127.0.0.1:8080"));
        this.host = url.getHost();
        this.port = url.getPort() < 0 ? 80 : url.getPort();
        this.redisUrl = args.getOrDefault("redis", "redis://127.0.0.1:6379");
        this.seconds = Long.parseLong(args.getOrDefault("seconds", "8"));
        this.apiKey = args.get("key");
        this.servicePid = args.get("pid");
        this.redisPid = args.get("redis-pid");
        this.etcdUrl = args.getOrDefault("etcd", listening("127.0.0.1", 2379) ? "http://127.0.0.1:2379" : null);
    }

    private static boolean listening(String host, int port) {
        try (java.net.Socket socket = new java.net.Socket()) {
            socket.connect(new java.net.InetSocketAddress(host, port), 500);
            return true;
        } catch (IOException nobody) {
            return false;
        }
    }

    /** One scenario's figures. */
    /**
     * One scenario's figures. cpuUsPerOp: CPU time (user + system) each process spent per cycle or
     * processed request while the scenario ran, read from /proc; it shows which of the three
     * processes sharing the cores is the limit. idlePct: the machine's idle share of all cores.
     */
    record Result(String scenario, int clients, double perSecond, String unit, double p50Ms, double p99Ms,
            double maxMs, long count, long errors, Map<String, Double> cpuUsPerOp, double idlePct) {
    }

    private Result result(String scenario, int clients, String unit, Histogram latency, long count, long errors,
            double secondsRun) {
        Map<String, Double> cpu = new LinkedHashMap<>();
        CpuSnapshot now = CpuSnapshot.take(servicePid, redisPid);
        for (Map.Entry<String, Long> process : now.ticks().entrySet()) {
            Long before = scenarioCpu.ticks().get(process.getKey());
            if (before != null && count > 0) {
                cpu.put(process.getKey(), round((process.getValue() - before) * 10_000.0 / count));
            }
        }
        long allTicks = now.allTicks() - scenarioCpu.allTicks();
        double idle = allTicks <= 0 ? -1 : round(100.0 * (now.idleTicks() - scenarioCpu.idleTicks()) / allTicks);
        return new Result(scenario, clients, round(count / secondsRun), unit, ms(latency.getValueAtPercentile(50)),
                ms(latency.getValueAtPercentile(99)), ms(latency.getMaxValue()), count, errors, cpu, idle);
    }

    /** Marks the start of a scenario's measurement for {@link #result}. */
    private void begin() {
        scenarioCpu = CpuSnapshot.take(servicePid, redisPid);
    }

    /** CPU ticks (1/100 s, Linux's USER_HZ) of the load generator, the service and Redis, and of the machine. */
    record CpuSnapshot(Map<String, Long> ticks, long allTicks, long idleTicks) {
        static CpuSnapshot take(String servicePid, String redisPid) {
            Map<String, Long> ticks = new LinkedHashMap<>();
            ticks.put("loadGenerator", processTicks("self"));
            if (servicePid != null) {
                ticks.put("service", processTicks(servicePid));
            }
            if (redisPid != null) {
                ticks.put("redis", processTicks(redisPid));
            }
            ticks.values().removeIf(t -> t < 0);
            long all = 0;
            long idle = 0;
            try {
                String[] cpu = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
                for (int i = 1; i < cpu.length; i++) {
                    all += Long.parseLong(cpu[i]);
                }
                idle = Long.parseLong(cpu[4]) + Long.parseLong(cpu[5]);
            } catch (IOException | RuntimeException notLinux) {
                all = -1;
            }
            return new CpuSnapshot(ticks, all, idle);
        }

        private static long processTicks(String pid) {
            try {
                String stat = Files.readString(Path.of("/proc", pid, "stat"));
                String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                return Long.parseLong(fields[11]) + Long.parseLong(fields[12]); // utime, stime
            } catch (IOException | RuntimeException gone) {
                return -1;
            }
        }
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> args = new LinkedHashMap<>();
        for (String arg : argv) {
            if (arg.startsWith("--") && arg.contains("=")) {
                args.put(arg.substring(2, arg.indexOf('=')), arg.substring(arg.indexOf('=') + 1));
            }
        }
        Benchmark bench = new Benchmark(args);
        try {
            bench.runAll(args);
        } finally {
            bench.vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    private void runAll(Map<String, String> args) throws Exception {
        Path out = Path.of(args.getOrDefault("out", "target/benchmark"));
        Files.createDirectories(out);
        String pid = args.get("pid");
        if (redisPid == null) {
            redisPid = localRedisPid();
        }
        List<Result> results = new ArrayList<>();
        System.err.println("warming up");
        if (args.containsKey("only")) {
            // One scenario after its own warm-up: for profiling and for trying a change quickly.
            int clients = Integer.parseInt(args.getOrDefault("clients", "64"));
            int workMs = Integer.parseInt(args.getOrDefault("work-ms", "0"));
            long warmup = Long.parseLong(args.getOrDefault("warmup", "8"));
            Result result = null;
            for (long forSeconds : new long[] { warmup, seconds }) {
                result = switch (args.get("only")) {
                    case "uncontended" -> uncontended(clients, forSeconds);
                    case "hot" -> hotLcid(clients, forSeconds, Integer.parseInt(args.getOrDefault("take", "1")), workMs);
                    case "direct" -> scriptsDirect(clients, forSeconds);
                    case "spin" -> spinLock(clients, forSeconds, workMs);
                    case "etcd" -> etcdLocks(clients, forSeconds);
                    case "etcd-hot" -> etcdLocks(clients, forSeconds, true);
                    default -> throw new IllegalArgumentException("--only=uncontended|hot|direct|spin|etcd|etcd-hot");
                };
                System.err.println("measuring");
            }
            System.out.println(JSON.writeValueAsString(result));
            return;
        }
        // Warm-up: the JIT of both JVMs (on two shared cores the service's C2 compiler is still busy
        // after 30 s of load), pools, the script cache.
        long warmup = Long.parseLong(args.getOrDefault("warmup", "45"));
        uncontended(64, warmup);
        hotLcid(16, Math.max(3, warmup / 6), 1, 0);
        hotLcid(16, Math.max(3, warmup / 6), 16, 0);
        results.add(uncontended(64, seconds));
        // The hot lcid and the spin lock twice: with an empty critical section, and with 1 ms of
        // work per lock hold (a request with take 1, a whole batch with take 16: one database
        // transaction for the batch).
        for (int workMs : new int[] { 0, CRITICAL_SECTION_MS }) {
            results.add(hotLcid(16, seconds, 1, workMs));
            results.add(hotLcid(16, seconds, 16, workMs));
            results.add(spinLock(16, seconds, workMs));
        }
        System.err.println("hot lcid and spin lock done");
        results.add(scriptsDirect(64, seconds));
        System.err.println("scripts direct done");
        if (etcdUrl != null) {
            etcdLocks(64, Math.max(3, seconds / 2));
            results.add(etcdLocks(64, seconds));
            results.add(etcdLocks(16, seconds, true));
            System.err.println("etcd done");
        }
        List<Result> curve = new ArrayList<>();
        for (int clients : new int[] { 1, 4, 16, 32, 64, 128 }) {
            curve.add(uncontended(clients, Math.max(3, seconds / 2)));
        }
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("machine", Runtime.getRuntime().availableProcessors() + " cores, "
                + System.getProperty("os.name") + " " + System.getProperty("os.arch") + ", Java "
                + System.getProperty("java.version"));
        report.put("secondsPerScenario", seconds);
        report.put("results", results);
        report.put("uncontendedByConcurrency", curve);
        if (pid != null) {
            report.put("serviceRssPeakMb", peakRssMb(pid));
        }
        String json = JSON.writerWithDefaultPrettyPrinter().writeValueAsString(report);
        System.out.println(json);
        Files.writeString(out.resolve("results.json"), json);
        chart(curve, out.resolve("throughput-p99.png"));
        System.err.println("wrote " + out.resolve("results.json") + " and " + out.resolve("throughput-p99.png"));
    }

    // ---- a. uncontended: acquire -> complete cycles on one lcid per client ------------------------

    private Result uncontended(int clients, long forSeconds) throws Exception {
        HttpClient http = http(clients);
        Result result = cycleScenario("uncontended acquire->complete", clients, forSeconds, (loops, c, done) -> {
            String lcid = "bench-" + run + "-u" + loops.scenario() + "-" + c;
            loops.run(n -> httpCycle(http, lcid, n), done);
        });
        http.close();
        System.err.printf("uncontended with %d clients done%n", clients);
        return result;
    }

    /** What each closed loop of a cycle scenario gets: its scenario's number and the loop runner. */
    private record Loops(long scenario, long deadline, ConcurrentHistogram latency, AtomicLong cycles,
            AtomicLong errors) {

        /** Runs {@code cycle} 0, 1, 2, ... until the deadline, then completes {@code done}. */
        void run(Function<Long, Future<Boolean>> cycle, CompletableFuture<Void> done) {
            Benchmark.cycles(cycle, 0, deadline, latency, cycles, errors, done);
        }

        /** A loop that could not start: one error, and it is done. */
        void fail(CompletableFuture<Void> done) {
            errors.incrementAndGet();
            done.complete(null);
        }
    }

    /** Starts one closed loop of a cycle scenario: client {@code c}, which completes {@code done} when it stops. */
    private interface CycleClient {
        void start(Loops loops, int c, CompletableFuture<Void> done);
    }

    /** {@code clients} closed loops of cycles for {@code forSeconds}: cycles/s, latency and CPU as one result. */
    private Result cycleScenario(String scenario, int clients, long forSeconds, CycleClient client) throws Exception {
        ConcurrentHistogram latency = histogram();
        begin();
        Loops loops = new Loops(scenarioRuns.incrementAndGet(), System.nanoTime() + TimeUnit.SECONDS.toNanos(forSeconds),
                latency, new AtomicLong(), new AtomicLong());
        double took = closedLoops(clients, forSeconds, (c, done) -> client.start(loops, c, done));
        return result(scenario, clients, "cycles/s", latency, loops.cycles().get(), loops.errors().get(), took);
    }

    /** One acquire -> complete cycle over HTTP; true when it ended RELEASED. */
    private Future<Boolean> httpCycle(HttpClient http, String lcid, long n) {
        String requestId = "r" + n;
        return post(http, "/v1/locks/" + lcid + "/acquire", "{\"requestId\":\"" + requestId + "\"}")
                .compose(granted -> post(http, "/v1/locks/" + lcid + "/complete",
                        "{\"token\":\"" + granted.get("token").asText() + "\",\"requestId\":\"" + requestId + "\"}"))
                .map(released -> "RELEASED".equals(released.path("status").asText()));
    }

    /**
     * A closed loop of one client: runs cycle n, records its latency (or an error), then cycle
     * n + 1, until the deadline.
     */
    private static void cycles(Function<Long, Future<Boolean>> cycle, long n, long deadline,
            ConcurrentHistogram latency, AtomicLong cycles, AtomicLong errors, CompletableFuture<Void> done) {
        if (System.nanoTime() >= deadline) {
            done.complete(null);
            return;
        }
        long start = System.nanoTime();
        cycle.apply(n).onComplete(result -> {
            if (result.succeeded() && result.result()) {
                latency.recordValue((System.nanoTime() - start) / 1000);
                cycles.incrementAndGet();
            } else {
                errors.incrementAndGet();
            }
            cycles(cycle, n + 1, deadline, latency, cycles, errors, done);
        });
    }

    // ---- b. one hot lcid: submitters queue work, holders drain it by handoff ----------------------

    /**
     * Each submitter has one update in flight at a time, like a service reacting to events: it
     * submits, and submits the next one once its update was processed, by itself (it got the lock)
     * or by whoever held the lock (handoff). Processed/s is what the lock lets through. With
     * {@code take} > 1 holders are handed batches (batch handoff) and complete each as a whole.
     */
    private Result hotLcid(int submitters, long forSeconds, int take, int workMs) throws Exception {
        // Two connections per submitter: its own holder loop may still run when it submits again,
        // and no call ever waits for a pooled connection.
        HttpClient http = http(2 * submitters);
        String lcid = "bench-" + run + "-hot" + scenarioRuns.incrementAndGet();
        ConcurrentHistogram latency = histogram();
        begin();
        Map<String, Long> submittedAt = new ConcurrentHashMap<>();
        Map<String, CompletableFuture<Void>> processedSignals = new ConcurrentHashMap<>();
        lastSignals = processedSignals;
        AtomicLong processed = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(forSeconds);
        List<CompletableFuture<Void>> loops = new ArrayList<>();
        long start = System.nanoTime();
        for (int s = 0; s < submitters; s++) {
            CompletableFuture<Void> done = new CompletableFuture<>();
            String prefix = "s" + s + "-";
            // Each loop on an event-loop context of its own, never on this thread: every HTTP
            // callback then runs on a Vert.x context.
            vertx.getOrCreateContext().runOnContext(v -> submitLoop(http, lcid, take, workMs, prefix, 0, deadline,
                    submittedAt, processedSignals, latency, processed, errors, done));
            loops.add(done);
        }
        CompletableFuture<Void> all = CompletableFuture.allOf(loops.toArray(CompletableFuture[]::new));
        for (int wait = 0; !all.isDone(); wait++) {
            try {
                all.get(forSeconds + 5, TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException stuck) {
                System.err.printf("hot lcid still running: %d loops done, %d waiting %s, processed %d%n",
                        loops.stream().filter(CompletableFuture::isDone).count(), signals().size(),
                        signals().keySet().stream().limit(5).toList(), processed.get());
                if (wait >= 2) {
                    long unfinished = loops.stream().filter(loop -> !loop.isDone()).count();
                    errors.addAndGet(unfinished);
                    System.err.printf("hot lcid: %d submitter loops did not finish, counted as errors%n", unfinished);
                    break;
                }
            }
        }
        double took = (lastProcessed.get() - start) / 1e9;
        http.close();
        return result("hot lcid submit->processed, take " + take + criticalSection(workMs), submitters,
                "processed/s", latency,
                processed.get(), errors.get(), took);
    }

    private void submitLoop(HttpClient http, String lcid, int take, int workMs, String prefix, long n, long deadline,
            Map<String, Long> submittedAt, Map<String, CompletableFuture<Void>> signals, ConcurrentHistogram latency,
            AtomicLong processed, AtomicLong errors, CompletableFuture<Void> done) {
        if (System.nanoTime() >= deadline) {
            done.complete(null);
            return;
        }
        String requestId = prefix + n;
        CompletableFuture<Void> mine = new CompletableFuture<>();
        signals.put(requestId, mine);
        submittedAt.put(requestId, System.nanoTime());
        String takeField = take > 1 ? ",\"take\":" + take : "";
        post(http, "/v1/locks/" + lcid + "/acquire", "{\"requestId\":\"" + requestId + "\"" + takeField + "}")
                .compose(answer -> holderLoop(http, lcid, take, workMs, requestId, answer, submittedAt, signals,
                        latency, processed))
                .onComplete(result -> {
                    if (result.failed()) {
                        if (errors.incrementAndGet() < 5) {
                            System.err.println("hot lcid: " + result.cause());
                        }
                        signals.remove(requestId);
                        mine.complete(null);
                    }
                    io.vertx.core.Context context = vertx.getOrCreateContext();
                    mine.whenComplete((ok, failure) -> context.runOnContext(v -> submitLoop(http, lcid, take, workMs,
                            prefix, n + 1, deadline, submittedAt, signals, latency, processed, errors, done)));
                });
    }

    /**
     * The holder loop of protocol.md: work on what we were given (a batch with take > 1), complete
     * it, take the next. Answers when the lock was released.
     */
    private Future<Void> holderLoop(HttpClient http, String lcid, int take, int workMs, String self, JsonNode r,
            Map<String, Long> submittedAt, Map<String, CompletableFuture<Void>> signals, ConcurrentHistogram latency,
            AtomicLong processed) {
        io.vertx.core.Promise<Void> released = io.vertx.core.Promise.promise();
        holderStep(http, lcid, take, workMs, self, r, submittedAt, signals, latency, processed, released);
        return released.future();
    }

    /**
     * One turn of the holder loop. The next turn is started from this one's callback rather than
     * composed onto its future: a holder can hand off for the whole run, and a chain of thousands of
     * composed futures overflows the stack when the last one completes (the error is swallowed and
     * the submitter's loop never finishes).
     */
    private void holderStep(HttpClient http, String lcid, int take, int workMs, String self, JsonNode r,
            Map<String, Long> submittedAt, Map<String, CompletableFuture<Void>> signals, ConcurrentHistogram latency,
            AtomicLong processed, io.vertx.core.Promise<Void> released) {
        String status = r.path("status").asText();
        if (!status.equals("ACQUIRED") && !status.equals("NEXT")) {
            released.complete();
            return;
        }
        List<String> batch = new ArrayList<>();
        if (status.equals("ACQUIRED")) {
            batch.add(self);
        } else {
            r.get("requests").forEach(item -> batch.add(item.get("requestId").asText()));
        }
        String token = r.get("token").asText();
        String body = take == 1 ? "{\"token\":\"" + token + "\",\"requestId\":\"" + batch.get(0) + "\"}"
                : "{\"token\":\"" + token + "\",\"take\":" + take + ",\"completed\":["
                        + String.join(",", batch.stream().map(id -> "{\"requestId\":\"" + id + "\"}").toList()) + "]}";
        work(workMs).compose(worked -> post(http, "/v1/locks/" + lcid + "/complete", body)).onComplete(answer -> {
            if (answer.failed()) {
                released.fail(answer.cause());
                return;
            }
            long now = System.nanoTime();
            for (String working : batch) {
                Long at = submittedAt.remove(working);
                if (at != null) {
                    latency.recordValue((now - at) / 1000);
                }
                processed.incrementAndGet();
                CompletableFuture<Void> signal = signals.remove(working);
                if (signal != null) {
                    signal.complete(null);
                }
            }
            lastProcessed.set(now);
            holderStep(http, lcid, take, workMs, self, answer.result(), submittedAt, signals, latency, processed,
                    released);
        });
    }

    // ---- c. the limit: the same scripts straight on Redis --------------------------------------

    private Result scriptsDirect(int clients, long forSeconds) throws Exception {
        Redis redis = Redis.createClient(vertx, new RedisOptions().setConnectionString(redisUrl)
                .setMaxPoolSize(clients).setMaxPoolWaiting(clients * 4));
        // Like the service: two shared connections, calls pipelined on them.
        List<RedisConnection> shared = List.of(connect(redis), connect(redis));
        AtomicLong turn = new AtomicLong();
        Function<Request, Future<Response>> send = request -> shared
                .get((int) (turn.getAndIncrement() % shared.size())).send(request);
        Result result = cycleScenario("scripts on Redis, no HTTP (acquire.lua+complete.lua)", clients, forSeconds,
                (loops, c, done) -> {
                    LockKeys keys = LockKeys.of("default", "bench-" + run + "-direct" + loops.scenario() + "-" + c);
                    loops.run(n -> scriptCycle(send, keys, n), done);
                });
        redis.close();
        return result;
    }

    private static RedisConnection connect(Redis redis) throws Exception {
        return redis.connect().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
    }

    /** One acquire.lua -> complete.lua cycle straight on Redis; true when it ended RELEASED. */
    private static Future<Boolean> scriptCycle(Function<Request, Future<Response>> redis, LockKeys keys, long n) {
        String requestId = "r" + n;
        String token = "t" + ThreadLocalRandom.current().nextLong();
        return eval(redis, new ScriptCall.Acquire(requestId, token, LEASE_MS, null, QUEUE_MAX, MAX_ATTEMPTS,
                RESULT_RETENTION_MS, IDLE_RETENTION_MS, DEAD_RETENTION_MS, false, PICKUP_MS), keys)
                .compose(r -> eval(redis, new ScriptCall.Complete(token, requestId, null, RESULT_RETENTION_MS,
                        IDLE_RETENTION_MS, false, "t" + ThreadLocalRandom.current().nextLong(), PICKUP_MS), keys))
                .map(released -> "RELEASED".equals(released.get(0).toString()));
    }

    /** The service's defaults (docs/configuration.md), as the scripts get them from it. */
    private static final long LEASE_MS = 30_000;
    private static final int QUEUE_MAX = 1000;
    private static final int MAX_ATTEMPTS = 5;
    private static final long RESULT_RETENTION_MS = 3_600_000;
    private static final long IDLE_RETENTION_MS = 86_400_000;
    private static final long DEAD_RETENTION_MS = 604_800_000;
    private static final long PICKUP_MS = 5_000;

    private static Future<Response> eval(Function<Request, Future<Response>> redis, ScriptCall call, LockKeys keys) {
        return redis.apply(scriptRequest(Command.EVALSHA, call.script().sha1(), call, keys))
                .recover(failure -> redis.apply(scriptRequest(Command.EVAL, call.script().source(), call, keys)));
    }

    private static Request scriptRequest(Command command, String scriptOrSha, ScriptCall call, LockKeys keys) {
        Request request = Request.cmd(command).arg(scriptOrSha).arg(keys.asList().size());
        keys.asList().forEach(request::arg);
        call.argv().forEach(request::arg);
        return request;
    }

    // ---- e. etcd's lock API, the same uncontended cycles -------------------------------------------

    /**
     * etcd's lock service over its HTTP gateway, as a user would use it instead of Baton: each
     * client grants itself a lease once, then per cycle locks its own name with that lease and
     * unlocks it (two HTTP calls, as Baton's acquire and complete).
     */
    private Result etcdLocks(int clients, long forSeconds) throws Exception {
        return etcdLocks(clients, forSeconds, false);
    }

    /**
     * etcd's lock API with {@code hot}: every client locks the same name, as the hot-lcid
     * scenario's submitters update one lcid (etcd queues the waiters by revision).
     */
    private Result etcdLocks(int clients, long forSeconds, boolean hot) throws Exception {
        java.net.URI url = java.net.URI.create(etcdUrl);
        HttpClient http = vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true)
                .setDefaultHost(url.getHost()).setDefaultPort(url.getPort()), new PoolOptions().setHttp1MaxSize(clients));
        String scenario = "etcd lock API (lease, lock, unlock), " + (hot ? "one name for all clients" : "one name per client");
        Result result = cycleScenario(scenario, clients, forSeconds,
                (loops, c, done) -> {
                    String name = base64("bench-" + run + "-e" + loops.scenario() + (hot ? "" : "-" + c));
                    post(http, "/v3/lease/grant", "{\"TTL\":30}").onComplete(lease -> {
                        if (lease.failed()) {
                            System.err.println("etcd lease: " + lease.cause());
                            loops.fail(done);
                            return;
                        }
                        String leaseId = lease.result().get("ID").asText();
                        loops.run(n -> post(http, "/v3/lock/lock",
                                "{\"name\":\"" + name + "\",\"lease\":\"" + leaseId + "\"}")
                                .compose(locked -> post(http, "/v3/lock/unlock",
                                        "{\"key\":\"" + locked.get("key").asText() + "\"}"))
                                .map(unlocked -> true), done);
                    });
                });
        http.close();
        return result;
    }

    private static String base64(String text) {
        return java.util.Base64.getEncoder().encodeToString(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    // ---- d. what users write without Baton: a spin-retry lock on the hot key -------------------

    private static final String COMPARE_AND_DELETE =
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

    private Result spinLock(int workers, long forSeconds, int workMs) throws Exception {
        Redis redis = Redis.createClient(vertx, new RedisOptions().setConnectionString(redisUrl)
                .setMaxPoolSize(workers).setMaxPoolWaiting(workers * 4));
        RedisAPI api = RedisAPI.api(redis);
        String key = "bench:" + run + ":spin";
        ConcurrentHistogram latency = histogram();
        begin();
        AtomicLong processed = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(forSeconds);
        double took = closedLoops(workers, forSeconds, (w, done) -> spinLoop(api, key, workMs, deadline, latency,
                processed, errors, done));
        redis.close();
        return result("spin-retry lock, same hot key (SET NX PX, backoff, compare-and-delete)"
                + criticalSection(workMs), workers,
                "processed/s", latency, processed.get(), errors.get(), took);
    }

    private void spinLoop(RedisAPI api, String key, int workMs, long deadline, ConcurrentHistogram latency, AtomicLong processed,
            AtomicLong errors, CompletableFuture<Void> done) {
        if (System.nanoTime() >= deadline) {
            done.complete(null);
            return;
        }
        long submitted = System.nanoTime();
        String token = Long.toString(ThreadLocalRandom.current().nextLong());
        tryLock(api, key, workMs, token, submitted, deadline, latency, processed, errors,
                () -> spinLoop(api, key, workMs, deadline, latency, processed, errors, done));
    }

    private void tryLock(RedisAPI api, String key, int workMs, String token, long submitted, long deadline,
            ConcurrentHistogram latency, AtomicLong processed, AtomicLong errors, Runnable next) {
        api.set(List.of(key, token, "NX", "PX", "30000")).onComplete(set -> {
            if (set.failed()) {
                errors.incrementAndGet();
                next.run();
            } else if (set.result() == null) {
                if (System.nanoTime() >= deadline) {
                    next.run(); // give up: unprocessed at the end
                    return;
                }
                // Busy: back off 1-10 ms and try again, as hand-written locks do.
                vertx.setTimer(1 + ThreadLocalRandom.current().nextInt(10), t -> tryLock(api, key, workMs, token, submitted,
                        deadline, latency, processed, errors, next));
            } else {
                work(workMs).compose(worked -> api.eval(List.of(COMPARE_AND_DELETE, "1", key, token)))
                        .onComplete(released -> {
                            latency.recordValue((System.nanoTime() - submitted) / 1000);
                            processed.incrementAndGet();
                            next.run();
                        });
            }
        });
    }

    // ---- plumbing -------------------------------------------------------------------------------

    /** The critical section of the hot scenarios: what a holder does while it holds the lock. */
    private static final int CRITICAL_SECTION_MS = 1;

    /** The holder's work under the lock: nothing, or a timer of {@code ms} (a database call's wait, no CPU). */
    private Future<Void> work(int ms) {
        if (ms == 0) {
            return Future.succeededFuture();
        }
        io.vertx.core.Promise<Void> worked = io.vertx.core.Promise.promise();
        vertx.setTimer(ms, t -> worked.complete());
        return worked.future();
    }

    private static String criticalSection(int workMs) {
        return workMs == 0 ? "" : ", " + workMs + " ms critical section";
    }

    /** Starts one closed loop per client and waits until all passed the deadline; answers the seconds run. */
    private static double closedLoops(int count, long forSeconds,
            java.util.function.BiConsumer<Integer, CompletableFuture<Void>> loop) throws Exception {
        List<CompletableFuture<Void>> loops = new ArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            CompletableFuture<Void> done = new CompletableFuture<>();
            loop.accept(i, done);
            loops.add(done);
        }
        CompletableFuture.allOf(loops.toArray(CompletableFuture[]::new)).get(forSeconds + 30, TimeUnit.SECONDS);
        return Math.min((System.nanoTime() - start) / 1e9, forSeconds);
    }

    private HttpClient http(int connections) {
        return vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true).setDefaultHost(host)
                .setDefaultPort(port), new PoolOptions().setHttp1MaxSize(connections));
    }

    private Future<JsonNode> post(HttpClient http, String path, String body) {
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST).setURI(path)
                .setIdleTimeout(10_000)
                .setTimeout(10_000)
                .putHeader("Content-Type", "application/json");
        if (apiKey != null) {
            options.putHeader("Authorization", "Bearer " + apiKey);
        }
        return http.request(options)
                .compose(request -> request.send(Buffer.buffer(body)))
                .compose(response -> response.body().map(buffer -> {
                    if (response.statusCode() >= 300) {
                        throw new IllegalStateException(response.statusCode() + " " + buffer);
                    }
                    try {
                        return JSON.readTree(buffer.getBytes());
                    } catch (IOException e) {
                        throw new IllegalStateException(e);
                    }
                }));
    }

    /** The pid INFO reports, when that process is on this machine (a local Redis), else null. */
    private String localRedisPid() throws Exception {
        Redis redis = Redis.createClient(vertx, new RedisOptions().setConnectionString(redisUrl));
        try {
            String info = redis.send(Request.cmd(Command.INFO).arg("server")).toCompletionStage().toCompletableFuture()
                    .get(5, TimeUnit.SECONDS).toString();
            java.util.regex.Matcher pid = java.util.regex.Pattern.compile("process_id:(\\d+)").matcher(info);
            return pid.find() && Files.exists(Path.of("/proc", pid.group(1))) ? pid.group(1) : null;
        } finally {
            redis.close();
        }
    }

    private static ConcurrentHistogram histogram() {
        return new ConcurrentHistogram(TimeUnit.MINUTES.toMicros(5), 3);
    }

    private static double ms(long micros) {
        return round(micros / 1000.0);
    }

    private static double round(double value) {
        return Math.round(value * 100) / 100.0;
    }

    private static double peakRssMb(String pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", pid, "status"))) {
            if (line.startsWith("VmHWM:")) {
                return round(Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0);
            }
        }
        return -1;
    }

    /** Throughput (bars, left axis) and p99 (line, right axis) against the number of clients. */
    private static void chart(List<Result> curve, Path png) throws IOException {
        int w = 900;
        int h = 500;
        int left = 90;
        int right = 90;
        int top = 60;
        int bottom = 70;
        BufferedImage image = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, w, h);
        double maxTput = curve.stream().mapToDouble(Result::perSecond).max().orElse(1) * 1.15;
        double maxP99 = curve.stream().mapToDouble(Result::p99Ms).max().orElse(1) * 1.15;
        int plotW = w - left - right;
        int plotH = h - top - bottom;
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        g.drawString("Baton uncontended acquire->complete: throughput and p99 vs concurrent clients", left - 40, 30);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        g.drawLine(left, top + plotH, left + plotW, top + plotH);
        g.drawLine(left, top, left, top + plotH);
        g.drawLine(left + plotW, top, left + plotW, top + plotH);
        for (int i = 0; i <= 5; i++) {
            int y = top + plotH - i * plotH / 5;
            g.setColor(new Color(230, 230, 230));
            g.drawLine(left + 1, y, left + plotW - 1, y);
            g.setColor(new Color(40, 90, 170));
            g.drawString(String.format("%.0f", maxTput * i / 5), 10, y + 4);
            g.setColor(new Color(200, 60, 40));
            g.drawString(String.format("%.1f ms", maxP99 * i / 5), left + plotW + 8, y + 4);
        }
        int slot = plotW / curve.size();
        int[] xs = new int[curve.size()];
        int[] ys = new int[curve.size()];
        for (int i = 0; i < curve.size(); i++) {
            Result r = curve.get(i);
            int barH = (int) (plotH * r.perSecond() / maxTput);
            int x = left + i * slot + slot / 4;
            g.setColor(new Color(40, 90, 170));
            g.fillRect(x, top + plotH - barH, slot / 2, barH);
            g.setColor(Color.BLACK);
            g.drawString(r.clients() + " clients", x, top + plotH + 18);
            g.drawString(String.format("%.0f/s", r.perSecond()), x, top + plotH - barH - 4);
            xs[i] = x + slot / 4;
            ys[i] = top + plotH - (int) (plotH * r.p99Ms() / maxP99);
        }
        g.setColor(new Color(200, 60, 40));
        g.setStroke(new BasicStroke(2.5f));
        g.drawPolyline(xs, ys, xs.length);
        for (int i = 0; i < xs.length; i++) {
            g.fillOval(xs[i] - 4, ys[i] - 4, 8, 8);
        }
        g.setColor(Color.BLACK);
        g.drawString("bars: cycles/s (left axis)   line: p99 latency of a cycle (right axis)", left, h - 20);
        g.dispose();
        ImageIO.write(image, "png", png.toFile());
    }
}
