package dev.baton.bench;

import java.io.File;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.HdrHistogram.Histogram;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;

/**
 * Long-poll figures of docs/performance.md: starts two replicas of the packaged service
 * (target/quarkus-app) on one Redis and measures
 * <ol>
 * <li>wake-up latency, from the holder's complete being answered to the waiter's long-poll being
 * answered, with the waiter on the same replica and on the other one;</li>
 * <li>Redis commands per second while 1,000 long-polls sit idle on one replica;</li>
 * <li>that replica's memory with 10,000 open long-polls.</li>
 * </ol>
 * Prints JSON. {@code --redis=redis://127.0.0.1:6379} (required), {@code --rounds=500},
 * {@code --idle=1000}, {@code --open=10000}, {@code --seconds=10}, {@code --jvm="-Xmx358m"} (the
 * replicas' JVM options; the default is 70 % of a 512 MiB pod, as the figures in docs/performance.md were
 * taken: deploy/ pods now have 768 MiB, the headroom these figures showed was needed).
 */
public final class WaitBench {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path JAR = Path.of("target", "quarkus-app", "quarkus-run.jar");

    private final Vertx vertx = Vertx.vertx();
    private final Context loop = vertx.getOrCreateContext();
    private final String run = UUID.randomUUID().toString().substring(0, 8);

    /** One running replica. */
    record Replica(Process process, int port, int management, HttpClient http) {
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> args = new LinkedHashMap<>();
        for (String arg : argv) {
            if (arg.startsWith("--") && arg.contains("=")) {
                args.put(arg.substring(2, arg.indexOf('=')), arg.substring(arg.indexOf('=') + 1));
            }
        }
        WaitBench bench = new WaitBench();
        try {
            System.out.println(JSON.writerWithDefaultPrettyPrinter().writeValueAsString(bench.runAll(args)));
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(1);
        } finally {
            bench.vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
        System.exit(0);
    }

    private Map<String, Object> runAll(Map<String, String> args) throws Exception {
        String redis = args.get("redis");
        if (redis == null) {
            throw new IllegalArgumentException("--redis=redis://host:port is required");
        }
        int rounds = Integer.parseInt(args.getOrDefault("rounds", "500"));
        int idle = Integer.parseInt(args.getOrDefault("idle", "1000"));
        int open = Integer.parseInt(args.getOrDefault("open", "10000"));
        int seconds = Integer.parseInt(args.getOrDefault("seconds", "10"));
        // A 512 MiB pod with -XX:MaxRAMPercentage=70, the figures' setting (deploy/ now gives 768 MiB).
        String jvm = args.getOrDefault("jvm", "-Xmx358m");
        Replica a = start(redis, jvm);
        Replica b = start(redis, jvm);
        Map<String, Object> report = new LinkedHashMap<>();
        try {
            report.put("machine", Runtime.getRuntime().availableProcessors() + " cores, Java "
                    + System.getProperty("java.version") + ", Redis " + info(redis, "server").get("redis_version"));
            System.err.println("warming up");
            wakeUps(a, a, rounds);
            wakeUps(a, b, rounds);
            report.put("wakeUpSameReplica", wakeUps(a, a, rounds));
            report.put("wakeUpOtherReplica", wakeUps(a, b, rounds));
            long rssBefore = rssKb(b.process().pid());
            jcmd(b.process().pid(), "GC.run");
            report.put("heapAfterFullGcBeforeLongPolls", jcmd(b.process().pid(), "GC.heap_info").lines()
                    .filter(l -> l.contains("used")).findFirst().orElse("").trim());
            report.put("idleLongPolls", idle(redis, a, b, idle, seconds));
            report.put("openLongPolls", memory(a, b, open, rssBefore));
        } finally {
            a.process().destroy();
            b.process().destroy();
            a.process().waitFor(30, TimeUnit.SECONDS);
            b.process().waitFor(30, TimeUnit.SECONDS);
        }
        return report;
    }

    // ---- 1. wake-up latency -------------------------------------------------------------------

    /** Holder on {@code holderSide}, waiter long-polling on {@code waiterSide}. */
    private Map<String, Object> wakeUps(Replica holderSide, Replica waiterSide, int rounds) throws Exception {
        Histogram afterAnswer = new Histogram(3);
        Histogram afterSend = new Histogram(3);
        for (int i = 0; i < rounds; i++) {
            String lcid = "wait-bench-" + run + "-" + UUID.randomUUID().toString().substring(0, 8);
            JsonNode holder = post(holderSide, lcid, "acquire", "{\"requestId\":\"holder\"}").get(10, TimeUnit.SECONDS);
            if (!holder.has("token")) {
                throw new IllegalStateException("holder of " + lcid + " got " + holder);
            }
            CompletableFuture<Long> answered = new CompletableFuture<>();
            CompletableFuture<JsonNode> turn = post(waiterSide, lcid, "acquire",
                    "{\"requestId\":\"waiter\",\"mode\":\"wait\",\"waitMs\":10000}")
                    .whenComplete((body, failure) -> answered.complete(System.nanoTime()));
            // Once its request exists the long-poll is registered (before its first check).
            while (get(holderSide, "/v1/locks/" + lcid + "/requests/waiter").get(10, TimeUnit.SECONDS)
                    .path("state").isMissingNode()) {
                Thread.sleep(1);
            }
            long sent = System.nanoTime();
            post(holderSide, lcid, "complete", "{\"token\":\"" + holder.get("token").asText()
                    + "\",\"requestId\":\"holder\"}").get(10, TimeUnit.SECONDS);
            long completeAnswered = System.nanoTime();
            JsonNode acquired = turn.get(15, TimeUnit.SECONDS);
            if (!"ACQUIRED".equals(acquired.path("status").asText())) {
                throw new IllegalStateException("waiter got " + acquired);
            }
            long at = answered.get();
            afterAnswer.recordValue(Math.max(0, at - completeAnswered) / 1000);
            afterSend.recordValue((at - sent) / 1000);
            post(waiterSide, lcid, "complete", "{\"token\":\"" + acquired.get("token").asText()
                    + "\",\"requestId\":\"waiter\"}").get(10, TimeUnit.SECONDS);
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("rounds", rounds);
        result.put("fromCompleteAnswerMs", percentiles(afterAnswer));
        result.put("fromCompleteSentMs", percentiles(afterSend));
        System.err.printf("wake-up latency (%s): %s%n", holderSide == waiterSide ? "same replica" : "other replica",
                result);
        return result;
    }

    // ---- 2. Redis calls with idle long-polls ------------------------------------------------------

    private Map<String, Object> idle(String redis, Replica a, Replica b, int count, int seconds) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        HttpClient http = client(count + 10);
        Map<String, String> holders = openWaiters(a, b, http, count, stop);
        Map<String, String> before = info(redis, "all");
        long start = System.nanoTime();
        Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
        Map<String, String> after = info(redis, "all");
        double took = (System.nanoTime() - start) / 1e9;
        // Commands run inside scripts count too; the calls the services sent are the scripts.
        long commands = Long.parseLong(after.get("total_commands_processed"))
                - Long.parseLong(before.get("total_commands_processed")) - 1; // the INFO itself
        long calls = calls(after, "cmdstat_evalsha") - calls(before, "cmdstat_evalsha")
                + calls(after, "cmdstat_eval") - calls(before, "cmdstat_eval");
        int openNow = gauge(b);
        stop.set(true);
        http.close();
        release(a, holders);
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("longPolls", count);
        result.put("openAtEnd", openNow);
        result.put("seconds", round(took));
        result.put("scriptCallsPerSecond", round(calls / took));
        result.put("scriptCallsPerLongPollPerSecond", round(calls / took / count));
        result.put("redisCommandsPerSecondInsideScriptsIncluded", round(commands / took));
        System.err.printf("idle long-polls: %s%n", result);
        return result;
    }

    // ---- 3. memory with many open long-polls --------------------------------------------------------

    private Map<String, Object> memory(Replica a, Replica b, int count, long rssBeforeKb) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        HttpClient http = client(count + 10);
        Map<String, String> holders = openWaiters(a, b, http, count, stop);
        Thread.sleep(2000);
        long rss = rssKb(b.process().pid());
        int openNow = gauge(b);
        long peak = peakRssKb(b.process().pid());
        if (System.getProperty("bench.histogram") != null) {
            jcmd(b.process().pid(), "GC.class_histogram").lines().limit(25).forEach(System.err::println);
        }
        jcmd(b.process().pid(), "GC.run");
        String heap = jcmd(b.process().pid(), "GC.heap_info");
        long rssAfterGc = rssKb(b.process().pid());
        stop.set(true);
        http.close();
        release(a, holders);
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("longPolls", openNow);
        result.put("serviceRssBeforeMb", round(rssBeforeKb / 1024.0));
        result.put("serviceRssWithThemMb", round(rss / 1024.0));
        result.put("serviceRssPeakMb", round(peak / 1024.0));
        result.put("rssPerLongPollKb", round((rss - rssBeforeKb) / (double) Math.max(1, openNow)));
        result.put("serviceRssAfterFullGcMb", round(rssAfterGc / 1024.0));
        result.put("heapAfterFullGc", heap.lines().filter(l -> l.contains("used")).findFirst().orElse("").trim());
        System.err.printf("open long-polls: %s%n", result);
        return result;
    }

    /**
     * Holders (on A) for count / 100 lcids and 100 wait requests behind each, long-polling on B
     * and asking again whenever waitMs passes, until stop; answers once B holds them all.
     */
    private Map<String, String> openWaiters(Replica a, Replica b, HttpClient http, int count, AtomicBoolean stop)
            throws Exception {
        Map<String, String> holders = new LinkedHashMap<>();
        int perLcid = 100;
        for (int l = 0; l * perLcid < count; l++) {
            String lcid = "wait-bench-" + run + "-idle-" + UUID.randomUUID().toString().substring(0, 6);
            JsonNode holder = post(a, lcid, "acquire", "{\"requestId\":\"holder\",\"leaseMs\":600000}")
                    .get(10, TimeUnit.SECONDS);
            if (!holder.has("token")) {
                throw new IllegalStateException("holder of " + lcid + " got " + holder);
            }
            holders.put(lcid, holder.get("token").asText());
            for (int w = 0; w < perLcid && l * perLcid + w < count; w++) {
                waitLoop(http, b, lcid, "w" + w, stop);
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (gauge(b) < count && System.nanoTime() < deadline) {
            Thread.sleep(200);
        }
        System.err.printf("%d long-polls open on B%n", gauge(b));
        return holders;
    }

    private void waitLoop(HttpClient http, Replica b, String lcid, String requestId, AtomicBoolean stop) {
        if (stop.get()) {
            return;
        }
        send(http, b.port(), HttpMethod.POST, "/v1/locks/" + lcid + "/acquire",
                "{\"requestId\":\"" + requestId + "\",\"mode\":\"wait\",\"waitMs\":30000}")
                .onComplete(done -> {
                    if (done.succeeded() && "QUEUED".equals(done.result().path("status").asText())) {
                        waitLoop(http, b, lcid, requestId, stop);
                    }
                });
    }

    private void release(Replica a, Map<String, String> holders) throws Exception {
        for (Map.Entry<String, String> holder : holders.entrySet()) {
            post(a, holder.getKey(), "abort", "{\"token\":\"" + holder.getValue() + "\",\"requestId\":\"holder\"}")
                    .get(10, TimeUnit.SECONDS);
        }
    }

    // ---- plumbing ------------------------------------------------------------------------------------

    private Replica start(String redis, String jvm) throws Exception {
        int port = freePort();
        int management = freePort();
        File log = File.createTempFile("baton-wait-bench", ".log");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString()));
        command.addAll(List.of(jvm.split(" ")));
        command.addAll(List.of("-jar", JAR.toString()));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log);
        builder.environment().keySet().removeIf(name -> name.startsWith("QUARKUS_") || name.startsWith("BATON_"));
        builder.environment().putAll(Map.of("QUARKUS_REDIS_HOSTS", redis, "QUARKUS_HTTP_PORT", Integer.toString(port),
                "QUARKUS_MANAGEMENT_PORT", Integer.toString(management), "BATON_AUTH_ENABLED", "false",
                "QUARKUS_SHUTDOWN_DELAY_ENABLED", "false"));
        Process process = builder.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.readString(log.toPath(), StandardCharsets.UTF_8).contains("Listening on")) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("service did not start: " + Files.readString(log.toPath()));
            }
            Thread.sleep(200);
        }
        return new Replica(process, port, management, client(64));
    }

    private HttpClient client(int connections) {
        return vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true).setIdleTimeout(120),
                new PoolOptions().setHttp1MaxSize(connections).setMaxWaitQueueSize(-1));
    }

    private CompletableFuture<JsonNode> post(Replica replica, String lcid, String operation, String body) {
        return send(replica.http(), replica.port(), HttpMethod.POST, "/v1/locks/" + lcid + "/" + operation, body)
                .toCompletionStage().toCompletableFuture();
    }

    private CompletableFuture<JsonNode> get(Replica replica, String path) {
        return send(replica.http(), replica.port(), HttpMethod.GET, path, null).toCompletionStage()
                .toCompletableFuture();
    }

    /**
     * On the bench's own event loop: a response handled from a thread outside any Vert.x context
     * can lose its body (seen here: 200, content-length 214, empty body).
     */
    private Future<JsonNode> send(HttpClient http, int port, HttpMethod method, String path, String body) {
        Promise<JsonNode> answer = Promise.promise();
        loop.runOnContext(ignored -> sendOnLoop(http, port, method, path, body).onComplete(answer));
        return answer.future();
    }

    private static Future<JsonNode> sendOnLoop(HttpClient http, int port, HttpMethod method, String path,
            String body) {
        return http.request(new RequestOptions().setMethod(method).setHost("127.0.0.1").setPort(port).setURI(path)
                .putHeader("content-type", "application/json").setTimeout(60_000))
                .compose(request -> body == null ? request.send() : request.send(Buffer.buffer(body)))
                .compose(response -> response.body().map(buffer -> buffer.length() == 0
                        ? Buffer.buffer("{\"httpStatus\":" + response.statusCode() + "}") : buffer))
                .map(buffer -> {
                    try {
                        return JSON.readTree(buffer.getBytes());
                    } catch (IOException e) {
                        throw new IllegalStateException(e);
                    }
                });
    }

    /** baton_longpolls_open of a replica, from its /q/metrics. */
    private static int gauge(Replica replica) throws IOException, InterruptedException {
        java.net.http.HttpResponse<String> metrics = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + replica.management()
                        + "/q/metrics")).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        return metrics.body().lines().filter(line -> line.startsWith("baton_longpolls_open "))
                .mapToInt(line -> (int) Double.parseDouble(line.substring(line.indexOf(' ') + 1))).findFirst()
                .orElse(-1);
    }

    /** One INFO section, as name -> value (a plain RESP call, so the bench counts its own commands). */
    private static Map<String, String> info(String redisUrl, String section) throws IOException {
        java.net.URI uri = java.net.URI.create(redisUrl);
        try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
            socket.getOutputStream().write(("*2\r\n$4\r\nINFO\r\n$" + section.length() + "\r\n" + section + "\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            var in = new java.io.DataInputStream(socket.getInputStream());
            String header = readLine(in);
            byte[] text = new byte[Integer.parseInt(header.substring(1))];
            in.readFully(text);
            Map<String, String> values = new LinkedHashMap<>();
            for (String line : new String(text, StandardCharsets.UTF_8).split("\r\n")) {
                int colon = line.indexOf(':');
                if (colon > 0) {
                    values.put(line.substring(0, colon), line.substring(colon + 1));
                }
            }
            return values;
        }
    }

    /** The calls= figure of one INFO commandstats line, 0 when the command never ran. */
    private static long calls(Map<String, String> info, String command) {
        String stats = info.get(command);
        if (stats == null) {
            return 0;
        }
        String calls = stats.substring(stats.indexOf("calls=") + 6);
        return Long.parseLong(calls.substring(0, calls.indexOf(',')));
    }

    private static String readLine(java.io.DataInputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        int c;
        while ((c = in.read()) != '\r') {
            line.append((char) c);
        }
        in.read(); // \n
        return line.toString();
    }

    private static long rssKb(long pid) throws IOException {
        return statusKb(pid, "VmRSS:");
    }

    private static long peakRssKb(long pid) throws IOException {
        return statusKb(pid, "VmHWM:");
    }

    private static long statusKb(long pid, String field) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith(field)) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }

    private static String jcmd(long pid, String command) throws IOException, InterruptedException {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        if (!Files.exists(jcmd)) {
            return "";
        }
        Process process = new ProcessBuilder(jcmd.toString(), Long.toString(pid), command).redirectErrorStream(true)
                .start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        process.waitFor(30, TimeUnit.SECONDS);
        return out;
    }

    private static Map<String, Object> percentiles(Histogram micros) {
        Map<String, Object> result = new LinkedHashMap<>();
        for (double p : new double[] { 50, 90, 99, 100 }) {
            result.put(p == 100 ? "max" : "p" + (int) p, round(micros.getValueAtPercentile(p) / 1000.0));
        }
        return result;
    }

    private static int freePort() throws IOException {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static double round(double value) {
        return Math.round(value * 100) / 100.0;
    }
}
