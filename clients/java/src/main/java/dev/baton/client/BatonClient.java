package dev.baton.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The Baton client: every call of protocol v1.1, and the holder loop on top of them.
 *
 * <pre>{@code
 * try (BatonClient baton = BatonClient.builder("http://127.0.0.1:8080").apiKey(key).build()) {
 *     RunReport r = baton.run("order-7", work -> {
 *         db.write(work.request().payload(), work.fence());   // fenced write
 *         return Map.of("ok", true);                          // the request's result
 *     }, RunOptions.of("order-7-pay").payload(Map.of("amount", 5)));
 * }
 * }</pre>
 *
 * <p>Every call is retried with the same body after a connection error, a timeout, 429, 500 or 503 (see
 * {@link RetryPolicy}); that is safe because Baton answers every call from what is stored. Other 4xx answers
 * and answers that are not problem+json are never retried. Thread safe; one client per process is enough
 * (it keeps its HTTP connections alive). {@link #close()} stops the heartbeat threads.
 */
public final class BatonClient implements AutoCloseable {
    /** The version of this client, which is the protocol version it speaks. */
    public static final String VERSION = "1.1.0";

    private static final System.Logger LOG = System.getLogger("dev.baton.client");
    private static final int MAX_WAIT_MS = 30_000;
    private static final long LONG_POLL_GRACE_MS = 5_000;
    private static final int MAX_REASON = 1024;
    private static final ObjectMapper MAPPER = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private final String baseUrl;
    private final String apiKey;
    private final Path tokenFile;
    private final long tokenRefreshNanos;
    private final Object tokenLock = new Object();
    private String token;          // the token file's last good content (guarded by tokenLock)
    private long tokenReadAt;      // nanoTime of that read
    private boolean tokenWarned;   // a failed re-read was reported since
    private final Duration callTimeout;
    private final RetryPolicy retry;
    private final HttpClient http;
    private final ExecutorService executor;
    private final Tracing tracing;

    private BatonClient(Builder b) {
        String u = b.url;
        while (u.endsWith("/")) {
            u = u.substring(0, u.length() - 1);
        }
        this.baseUrl = u;
        this.apiKey = b.apiKey;
        this.tokenFile = b.tokenFile;
        this.tokenRefreshNanos = b.tokenRefresh.toNanos();
        if (tokenFile != null) {
            try {
                token = readToken(tokenFile);
            } catch (IOException e) {
                // Fail at start rather than with a 401 on the first call, far from the misconfiguration.
                throw new IllegalArgumentException("cannot read the token file " + tokenFile + ": " + e, e);
            }
            tokenReadAt = System.nanoTime();
        }
        this.callTimeout = b.callTimeout;
        this.retry = b.retryPolicy;
        this.tracing = b.tracing;
        AtomicInteger n = new AtomicInteger();
        // Heartbeat loops and cancellation listeners: a handful of daemon threads that never block the JVM's exit.
        this.executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "baton-client-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        // HTTP/1.1 with keep-alive (the default of java.net.http); no h2c upgrade dance on plain HTTP.
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(b.connectTimeout)
                .executor(executor)
                .build();
    }

    /** Starts a client for the service at {@code url} (for example {@code http://127.0.0.1:8080}). */
    public static Builder builder(String url) {
        return new Builder(url);
    }

    /** Builder of {@link BatonClient}. */
    public static final class Builder {
        private final String url;
        private String apiKey;
        private Path tokenFile;
        private Duration tokenRefresh = Duration.ofSeconds(30);
        private Duration callTimeout = Duration.ofSeconds(10);
        private Duration connectTimeout = Duration.ofSeconds(5);
        private RetryPolicy retryPolicy = RetryPolicy.DEFAULT;
        private Tracing tracing = Tracing.DETECTED;

        private Builder(String url) {
            if (url == null || url.isBlank()) {
                throw new IllegalArgumentException("url is required");
            }
            this.url = url;
        }

        /** The API key (sent as {@code Authorization: Bearer}); null when authentication is off. */
        public Builder apiKey(String key) {
            this.apiKey = key;
            return this;
        }

        /**
         * A file holding the bearer token instead of an API key, such as a Kubernetes projected service-account
         * token: read at {@link #build()} (which throws {@link IllegalArgumentException} when it cannot be read
         * or is empty) and again when the last read is older than {@link #tokenRefresh(Duration)}, because the
         * kubelet replaces the file before the token expires. Exclusive with {@link #apiKey(String)}.
         */
        public Builder tokenFile(Path file) {
            this.tokenFile = file;
            return this;
        }

        /** How long a token read from the {@link #tokenFile(Path)} is reused (default 30 s; zero: every attempt). */
        public Builder tokenRefresh(Duration d) {
            if (d == null || d.isNegative()) {
                throw new IllegalArgumentException("tokenRefresh must be zero or more");
            }
            this.tokenRefresh = d;
            return this;
        }

        /** One HTTP attempt's timeout (default 10 s). Long-polls use their waitMs + 5 s instead. */
        public Builder callTimeout(Duration d) {
            this.callTimeout = d;
            return this;
        }

        /** TCP connect timeout (default 5 s). */
        public Builder connectTimeout(Duration d) {
            this.connectTimeout = d;
            return this;
        }

        /** Retries (default {@link RetryPolicy#DEFAULT}: base 100 ms, cap 5 s, deadline 30 s). */
        public Builder retryPolicy(RetryPolicy p) {
            this.retryPolicy = p;
            return this;
        }

        /** Tests only: the holder's behaviour without OpenTelemetry, in a JVM that has it. */
        Builder tracing(Tracing t) {
            this.tracing = t;
            return this;
        }

        public BatonClient build() {
            if (apiKey != null && tokenFile != null) {
                throw new IllegalArgumentException("give either apiKey or tokenFile, not both");
            }
            return new BatonClient(this);
        }
    }

    /** The shared JSON mapper (results and payloads are converted with it). */
    public static ObjectMapper mapper() {
        return MAPPER;
    }

    ExecutorService executor() {
        return executor;
    }

    void log(System.Logger.Level level, String msg) {
        LOG.log(level, msg);
    }

    /** Stops the background threads. Locks still held are left to their leases. */
    @Override
    public void close() {
        executor.shutdownNow();
    }

    // ---------------------------------------------------------------- the calls

    /**
     * {@code POST /v1/locks/{lcid}/acquire}: take the lock, queue the request, or rescue a stranded queue.
     * Answers {@link Acquired}, {@link Queued} or {@link Next}. A wait request with waitMs is a long-poll.
     * The request's {@link AcquireRequest#trace()} goes as the traceparent/tracestate headers; without one, the
     * current OpenTelemetry span's context when the application has OpenTelemetry.
     */
    public Outcome acquire(String lcid, AcquireRequest req) {
        int waitMs = req.waitMs() == null ? 0 : req.waitMs();
        return acquireUntil(lcid, req, deadlineFor(waitMs));
    }

    private Outcome acquireUntil(String lcid, AcquireRequest req, long deadline) {
        ObjectNode b = MAPPER.createObjectNode();
        b.put("requestId", req.requestId());
        putAny(b, "payload", req.payload());
        putInt(b, "leaseMs", req.leaseMs());
        if (req.mode() != null) {
            b.put("mode", req.mode());
        }
        putInt(b, "waitMs", req.waitMs());
        putInt(b, "take", req.take());
        int waitMs = req.waitMs() == null ? 0 : req.waitMs();
        TraceContext trace = req.trace() != null ? req.trace() : tracing.current();
        Resp r = exchange("POST", lockPath(lcid) + "/acquire", b, deadline, attemptTimeoutMs(waitMs), trace);
        return parseOutcome(r);
    }

    /** {@code POST .../heartbeat}: renew the lease (null leaseMs: the lease in force). */
    public Acquired heartbeat(String lcid, String token, Integer leaseMs) {
        return heartbeatUntil(lcid, token, leaseMs, deadlineFor(0));
    }

    /** {@code POST .../heartbeat} with the lease in force. */
    public Acquired heartbeat(String lcid, String token) {
        return heartbeat(lcid, token, null);
    }

    Acquired heartbeatUntil(String lcid, String token, Integer leaseMs, long deadline) {
        ObjectNode b = MAPPER.createObjectNode();
        b.put("token", token);
        putInt(b, "leaseMs", leaseMs);
        Outcome o = parseOutcome(exchange("POST", lockPath(lcid) + "/heartbeat", b, deadline, callTimeout.toMillis()));
        if (o instanceof Acquired a) {
            return a;
        }
        throw new UnexpectedResponseException(200, "application/json", o.toString(), "heartbeat did not answer ACQUIRED");
    }

    /**
     * {@code POST .../complete} of one request with its result (null: none); {@code take} (null: default) is
     * how many queued requests to take next. Answers {@link Next} or {@link Released}.
     */
    public Outcome complete(String lcid, String token, String requestId, Object result, Integer take) {
        ObjectNode b = MAPPER.createObjectNode();
        b.put("token", token);
        b.put("requestId", requestId);
        putAny(b, "result", result);
        putInt(b, "take", take);
        return parseOutcome(exchange("POST", lockPath(lcid) + "/complete", b, deadlineFor(0), callTimeout.toMillis()));
    }

    /** {@code POST .../complete} of one request, taking the default number next. */
    public Outcome complete(String lcid, String token, String requestId, Object result) {
        return complete(lcid, token, requestId, result, null);
    }

    /** {@code POST .../complete} of a whole batch ({@code completed}: every active request, each once). */
    public Outcome complete(String lcid, String token, List<Completion> completed, Integer take) {
        ObjectNode b = MAPPER.createObjectNode();
        b.put("token", token);
        ArrayNode list = b.putArray("completed");
        for (Completion c : completed) {
            ObjectNode e = list.addObject();
            e.put("requestId", c.requestId());
            putAny(e, "result", c.result());
        }
        putInt(b, "take", take);
        return parseOutcome(exchange("POST", lockPath(lcid) + "/complete", b, deadlineFor(0), callTimeout.toMillis()));
    }

    /**
     * {@code POST .../abort} by the holder: give up the active request (the whole batch); with {@code requeue}
     * it goes back to the head with attempt + 1. {@code reason} (null: default) is cut to 1024 characters.
     */
    public Released abort(String lcid, String token, String requestId, boolean requeue, String reason) {
        ObjectNode b = MAPPER.createObjectNode();
        b.put("requestId", requestId);
        b.put("token", token);
        if (requeue) {
            b.put("requeue", true);
        }
        if (reason != null) {
            b.put("reason", cutReason(reason));
        }
        return released(exchange("POST", lockPath(lcid) + "/abort", b, deadlineFor(0), callTimeout.toMillis()));
    }

    /**
     * {@code POST .../abort} without a token: withdraw a QUEUED request. {@link NotQueuedException} when it no
     * longer waits (its state says where it is), {@link NotFoundException} when unknown.
     */
    public Released withdraw(String lcid, String requestId, String reason) {
        ObjectNode b = MAPPER.createObjectNode();
        b.put("requestId", requestId);
        if (reason != null) {
            b.put("reason", cutReason(reason));
        }
        return released(exchange("POST", lockPath(lcid) + "/abort", b, deadlineFor(0), callTimeout.toMillis()));
    }

    /** {@code GET /v1/locks/{lcid}}: the lock view (never the token). */
    public LockView lock(String lcid) {
        JsonNode n = json(exchange("GET", lockPath(lcid), null, deadlineFor(0), callTimeout.toMillis()));
        List<String> ids = new ArrayList<>();
        JsonNode a = n.get("activeRequestIds");
        if (a != null && a.isArray()) {
            a.forEach(e -> ids.add(e.asText()));
        }
        return new LockView(str(n, "lcid"), n.path("held").asBoolean(), optLong(n, "fence"),
                str(n, "activeRequestId"), ids, optLong(n, "heldForMs"), n.path("leaseRemainingMs").asLong(),
                n.path("queueLength").asInt());
    }

    /** {@code GET .../requests/{requestId}}: where a request stands. */
    public RequestView request(String lcid, String requestId) {
        return request(lcid, requestId, 0);
    }

    /**
     * {@code GET .../requests/{requestId}?waitMs=N}: held until the request has ended or waitMs passed (0 to
     * 30000), then the view either way.
     */
    public RequestView request(String lcid, String requestId, int waitMs) {
        return requestUntil(lcid, requestId, waitMs, deadlineFor(waitMs));
    }

    private RequestView requestUntil(String lcid, String requestId, int waitMs, long deadline) {
        String path = lockPath(lcid) + "/requests/" + seg(requestId) + (waitMs > 0 ? "?waitMs=" + waitMs : "");
        JsonNode n = json(exchange("GET", path, null, deadline, attemptTimeoutMs(waitMs)));
        JsonNode pos = n.get("position");
        JsonNode res = n.get("result");
        return new RequestView(str(n, "lcid"), str(n, "requestId"), str(n, "state"),
                pos == null || pos.isNull() ? null : pos.asInt(), n.path("attempt").asInt(), optLong(n, "fence"),
                res == null || res.isNull() ? null : res, str(n, "reason"), str(n, "traceparent"), str(n, "tracestate"));
    }

    /** {@code POST /v1/claims}: orphaned work of any lcid (or of lcids with the prefix); empty on 204. */
    public Optional<Next> claim(ClaimOptions o) {
        ObjectNode b = MAPPER.createObjectNode();
        if (o.lcidPrefix() != null) {
            b.put("lcidPrefix", o.lcidPrefix());
        }
        putInt(b, "leaseMs", o.leaseMs());
        putInt(b, "take", o.take());
        Resp r = exchange("POST", "/v1/claims", b, deadlineFor(0), callTimeout.toMillis());
        if (r.status == 204) {
            return Optional.empty();
        }
        Outcome out = parseOutcome(r);
        if (out instanceof Next n) {
            return Optional.of(n);
        }
        throw new UnexpectedResponseException(r.status, r.contentType, r.body, "a claim answers NEXT or 204");
    }

    /** {@code GET /v1/dead-letters?limit=N} (admin key): DEAD requests, newest first. */
    public List<DeadLetter> deadLetters(int limit) {
        JsonNode n = json(exchange("GET", "/v1/dead-letters?limit=" + limit, null, deadlineFor(0), callTimeout.toMillis()));
        List<DeadLetter> out = new ArrayList<>();
        for (JsonNode e : n.path("items")) {
            JsonNode p = e.get("payload");
            out.add(new DeadLetter(str(e, "lcid"), str(e, "requestId"), e.path("attempts").asInt(), str(e, "reason"),
                    p == null || p.isNull() ? null : p, str(e, "diedAt")));
        }
        return out;
    }

    /**
     * {@code POST .../requests/{requestId}/retry} (admin key): queue a DEAD request again (attempt 1).
     * {@link NotDeadException} when it is not DEAD (also when a repeated redrive already succeeded).
     */
    public Queued redrive(String lcid, String requestId) {
        Resp r = exchange("POST", lockPath(lcid) + "/requests/" + seg(requestId) + "/retry", null, deadlineFor(0),
                callTimeout.toMillis());
        Outcome o = parseOutcome(r);
        if (o instanceof Queued q) {
            return q;
        }
        throw new UnexpectedResponseException(r.status, r.contentType, r.body, "a redrive answers QUEUED");
    }

    // ---------------------------------------------------------------- the holder

    /**
     * Submits a request on {@code lcid} and, while this caller holds the lock, runs {@code handler} on each
     * request (or batch) it is handed, heartbeating in the background, completing with the handler's result
     * and going on with the next, until RELEASED.
     *
     * <ul>
     * <li>QUEUED: the request is stored and the live holder does it: returns at once.</li>
     * <li>The handler throws: the request is aborted with {@code requeue: true} and the error's message as the
     * reason, then {@link HandlerFailedException} (cause: the handler's error) is thrown.</li>
     * <li>The lock is lost (LOCK_LOST, or no renewal before the holder's deadline): the handler's thread is
     * interrupted, nothing is completed for it, and {@link LockLostException} is thrown.</li>
     * </ul>
     *
     * <p>With OpenTelemetry in the application, each handler call runs in a span {@code baton.work} linked to
     * the trace context its request(s) were submitted with (see {@link RunOptions#trace()}).
     */
    public RunReport run(String lcid, Handler handler, RunOptions o) {
        AcquireRequest req = AcquireRequest.of(o.requestId()).payload(o.payload()).leaseMs(o.leaseMs()).take(o.take())
                .trace(o.trace());
        long sent = System.nanoTime();
        Outcome out = acquire(lcid, req);
        if (out instanceof Queued q) {
            return new RunReport(lcid, "QUEUED", q.position(), List.of());
        }
        List<String> handled = new ArrayList<>();
        holdLoop(lcid, out, sent, o.requestId(), toJson(o.payload()), o.take(), handler, handled);
        return new RunReport(lcid, "RELEASED", null, handled);
    }

    /** {@link #run(String, Handler, RunOptions)} with a random requestId and no payload. */
    public RunReport run(String lcid, Handler handler) {
        return run(lcid, handler, RunOptions.defaults());
    }

    /** The holder loop from a grant (ACQUIRED of {@code ownId}, or NEXT) until RELEASED. */
    private void holdLoop(String lcid, Outcome first, long sentNanos, String ownId, JsonNode ownPayload, Integer take,
                          Handler handler, List<String> handled) {
        String token;
        long fence;
        long leaseMs;
        List<WorkItem> items;
        if (first instanceof Acquired a) {
            token = a.token();
            fence = a.fence();
            leaseMs = a.leaseMs();
            items = List.of(new WorkItem(ownId, ownPayload, 1, a.traceparent(), a.tracestate()));
        } else if (first instanceof Next n) {
            token = n.token();
            fence = n.fence();
            leaseMs = n.leaseMs();
            items = n.requests();
        } else {
            throw new IllegalArgumentException("not a grant: " + first.status());
        }
        Holding h = new Holding(this, lcid, token, leaseMs, sentNanos);
        h.start();
        try {
            while (true) {
                Work work = new Work(lcid, fence, items, h);
                Object result;
                h.enterHandler();
                try {
                    result = tracing.work(lcid, fence, items, () -> handler.handle(work));
                } catch (Throwable e) {
                    h.exitHandler();
                    if (h.isLost()) {
                        throw h.lostException();
                    }
                    abortAfterFailure(h, items.get(0).requestId(), e);
                    throw new HandlerFailedException(lcid, items.get(0).requestId(), e);
                }
                h.exitHandler();
                if (!h.beginFinish()) {
                    throw h.lostException(); // never complete for a holder whose lease may have run out
                }
                long sent = System.nanoTime();
                Outcome next;
                try {
                    if (items.size() > 1) {
                        next = complete(lcid, token, completions(items, result), take);
                    } else {
                        next = complete(lcid, token, items.get(0).requestId(), result, take);
                    }
                } catch (LockLostException e) {
                    h.markLost("complete answered LOCK_LOST");
                    throw e;
                }
                for (WorkItem w : items) {
                    handled.add(w.requestId());
                }
                if (next instanceof Next n) {
                    fence = n.fence();
                    items = n.requests();
                    h.endFinish(sent, n.leaseMs());
                } else {
                    return;
                }
            }
        } finally {
            h.stop();
        }
    }

    private void abortAfterFailure(Holding h, String requestId, Throwable e) {
        boolean interrupted = Thread.interrupted(); // let the abort go out, then restore the flag
        try {
            if (h.beginFinish()) {
                abort(h.lcid, h.token, requestId, true, reasonOf(e));
            }
        } catch (BatonException abortFailed) {
            // The lease will run out and the request come back with attempt + 1 all the same.
            LOG.log(System.Logger.Level.WARNING, "abort after a handler failure on " + h.lcid + " failed: "
                    + abortFailed.getMessage());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static List<Completion> completions(List<WorkItem> items, Object result) {
        Map<?, ?> byId = result instanceof Map<?, ?> m ? m : Map.of();
        if (result instanceof JsonNode node && node.isObject()) {
            List<Completion> out = new ArrayList<>();
            for (WorkItem w : items) {
                out.add(new Completion(w.requestId(), node.get(w.requestId())));
            }
            return out;
        }
        List<Completion> out = new ArrayList<>();
        for (WorkItem w : items) {
            out.add(new Completion(w.requestId(), byId.get(w.requestId())));
        }
        return out;
    }

    static String reasonOf(Throwable e) {
        String m = e.getMessage();
        return cutReason(m == null || m.isEmpty() ? e.toString() : m);
    }

    static String cutReason(String s) {
        if (s.length() <= MAX_REASON) {
            return s;
        }
        int end = MAX_REASON;
        if (Character.isHighSurrogate(s.charAt(end - 1))) {
            end--; // never split a character
        }
        return s.substring(0, end);
    }

    // ---------------------------------------------------------------- wait mode

    /**
     * Submits (or repeats) a {@code wait} request and long-polls until its turn, then picks the turn up: the
     * returned {@link Turn} holds the lock (heartbeats run in the background) until complete or abort.
     * On {@code timeout} the request is withdrawn (or, if its turn was just granted, picked up and aborted)
     * and {@link BatonTimeoutException} is thrown.
     *
     * @param leaseMs the turn's lease from the pick-up (null: 30000)
     */
    public Turn awaitTurn(String lcid, String requestId, Object payload, Integer leaseMs, Duration timeout) {
        return awaitTurn(lcid, requestId, payload, leaseMs, timeout, null);
    }

    /**
     * {@link #awaitTurn(String, String, Object, Integer, Duration)} submitting the request with {@code trace}
     * (null: the current OpenTelemetry span's context, if any).
     */
    public Turn awaitTurn(String lcid, String requestId, Object payload, Integer leaseMs, Duration timeout,
                          TraceContext trace) {
        long end = System.nanoTime() + timeout.toNanos();
        AcquireRequest base = AcquireRequest.of(requestId).payload(payload).leaseMs(leaseMs).mode(AcquireRequest.WAIT)
                .trace(trace);
        try {
            while (true) {
                long remainingMs = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
                if (remainingMs <= 0) {
                    break;
                }
                int waitMs = (int) Math.min(remainingMs, MAX_WAIT_MS);
                long sent = System.nanoTime();
                Outcome o = acquireUntil(lcid, base.waitMs(waitMs), Math.max(end, deadlineFor(0)));
                if (o instanceof Acquired a) {
                    Holding h = new Holding(this, lcid, a.token(), a.leaseMs(), sent);
                    h.start();
                    return new Turn(this, lcid, requestId, a.fence(), h, a.traceparent(), a.tracestate());
                }
                if (!(o instanceof Queued)) {
                    throw new UnexpectedResponseException(200, "application/json", o.toString(),
                            "a wait request's acquire answers ACQUIRED or QUEUED");
                }
            }
        } catch (RuntimeException e) {
            if (!(e instanceof BatonProblemException p) || p.status() >= 500 || p.status() == 429) {
                cancelWait(lcid, requestId, "await_turn failed: " + e.getMessage());
            }
            throw e;
        }
        cancelWait(lcid, requestId, "await_turn timed out");
        throw new BatonTimeoutException("no turn on " + lcid + " for " + requestId + " within " + timeout);
    }

    /** Withdraws a waiting request; if its turn was just granted, picks it up and aborts it. Best effort. */
    private void cancelWait(String lcid, String requestId, String reason) {
        boolean interrupted = Thread.interrupted();
        try {
            withdraw(lcid, requestId, reason);
        } catch (NotQueuedException e) {
            if ("ACTIVE".equals(e.state())) {
                try {
                    Outcome o = acquire(lcid, AcquireRequest.of(requestId).mode(AcquireRequest.WAIT));
                    if (o instanceof Acquired a) {
                        abort(lcid, a.token(), requestId, false, reason);
                    }
                } catch (BatonException ignored) {
                    // ACTIVE under another grant, or gone: nothing of ours to give back.
                }
            }
        } catch (BatonException e) {
            LOG.log(System.Logger.Level.DEBUG, "withdraw of " + lcid + "/" + requestId + " failed: " + e.getMessage());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Long-polls the request view until the request has ended (DONE with its result, ABORTED, DEAD).
     * {@link BatonTimeoutException} when {@code timeout} passes first; {@link NotFoundException} if unknown.
     */
    public RequestView awaitResult(String lcid, String requestId, Duration timeout) {
        long end = System.nanoTime() + timeout.toNanos();
        while (true) {
            long remainingMs = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
            int waitMs = (int) Math.max(0, Math.min(remainingMs, MAX_WAIT_MS));
            RequestView v = requestUntil(lcid, requestId, waitMs, Math.max(end, deadlineFor(0)));
            if (v.ended()) {
                return v;
            }
            if (remainingMs <= 0) {
                throw new BatonTimeoutException(lcid + "/" + requestId + " still " + v.state() + " after " + timeout);
            }
        }
    }

    // ---------------------------------------------------------------- claims

    /**
     * The continuous claim poller: claims; on work runs the holder loop on that lcid and claims again at
     * once; on 204 sleeps a random 200 ms to 1 s and claims again, until {@link ClaimOptions#stop()} says so or
     * the thread is interrupted. It never stops at an empty claim: work becomes claimable later than the call
     * that orphaned it. Handler errors and lost locks are logged and polling goes on.
     */
    public ClaimReport runClaims(Handler handler, ClaimOptions o) {
        long claims = 0;
        long empty = 0;
        long failures = 0;
        List<String> handled = new ArrayList<>();
        while (!stopRequested(o)) {
            Optional<Next> n;
            long sent = System.nanoTime();
            try {
                n = claim(o);
            } catch (BatonTransportException e) {
                if (e.interrupted()) {
                    break;
                }
                failures++;
                LOG.log(System.Logger.Level.WARNING, "claim failed: " + e.getMessage());
                if (!idle(o)) {
                    break;
                }
                continue;
            } catch (BatonException e) {
                failures++;
                LOG.log(System.Logger.Level.WARNING, "claim failed: " + e.getMessage());
                if (!idle(o)) {
                    break;
                }
                continue;
            }
            if (n.isEmpty()) {
                empty++;
                if (!idle(o)) {
                    break;
                }
                continue;
            }
            claims++;
            try {
                holdLoop(n.get().lcid(), n.get(), sent, null, null, o.take(), handler, handled);
            } catch (BatonException e) {
                failures++;
                LOG.log(System.Logger.Level.WARNING, "holder loop on " + n.get().lcid() + " ended: " + e.getMessage());
                if (e instanceof BatonTransportException t && t.interrupted()) {
                    break;
                }
            }
        }
        return new ClaimReport(claims, empty, handled.size(), failures);
    }

    private static boolean stopRequested(ClaimOptions o) {
        return Thread.currentThread().isInterrupted() || (o.stop() != null && o.stop().getAsBoolean());
    }

    /** Sleeps 200..1000 ms in short slices (so that a stop is seen soon); false when stopped meanwhile. */
    private static boolean idle(ClaimOptions o) {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ThreadLocalRandom.current().nextLong(200, 1001));
        try {
            while (true) {
                if (stopRequested(o)) {
                    return false;
                }
                long left = until - System.nanoTime();
                if (left <= 0) {
                    return true;
                }
                TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    // ---------------------------------------------------------------- several lcids

    /**
     * Holds the locks of every lcid at once: dedupes, sorts them by UTF-8 bytes (one global order, so two
     * callers never wait for each other in a cycle), takes a {@code wait} turn on each in that order (fresh
     * random requestIds), runs {@code handler} with every fence, then completes in reverse order. On any
     * failure it aborts (no requeue) what it holds and withdraws what it waits for, and rethrows (a handler's
     * checked exception wrapped in {@link HandlerFailedException}).
     *
     * <p>Each lock is still its own: nothing is atomic across lcids. Make the writes to all entities in one
     * database transaction fenced with every fence, or make them safe to redo.
     *
     * @param leaseMs each lock's lease (null: 30000)
     * @param timeout for taking all the locks
     */
    public <T> T lockAll(Collection<String> lcids, LockAllHandler<T> handler, Integer leaseMs, Duration timeout) {
        return lockAll(lcids, handler, leaseMs, timeout, null);
    }

    /**
     * {@link #lockAll(Collection, LockAllHandler, Integer, Duration)} submitting every turn with {@code trace}
     * (null: the current OpenTelemetry span's context, if any). With OpenTelemetry in the application the
     * handler runs in a span {@code baton.work} over all the lcids.
     */
    public <T> T lockAll(Collection<String> lcids, LockAllHandler<T> handler, Integer leaseMs, Duration timeout,
                         TraceContext trace) {
        List<String> order = lockOrder(lcids);
        long end = System.nanoTime() + timeout.toNanos();
        List<Turn> held = new ArrayList<>();
        try {
            for (String lcid : order) {
                Duration left = Duration.ofNanos(end - System.nanoTime());
                if (left.isNegative() || left.isZero()) {
                    throw new BatonTimeoutException("lockAll: no turn on " + lcid + " within " + timeout);
                }
                held.add(awaitTurn(lcid, "lock-all-" + UUID.randomUUID(), null, leaseMs, left, trace));
            }
            LockSet set = new LockSet(held);
            T result;
            List<WorkItem> turns = new ArrayList<>();
            for (Turn t : held) {
                turns.add(new WorkItem(t.requestId(), null, 1, t.traceparent, t.tracestate));
            }
            set.enter();
            try {
                List<Long> fences = new ArrayList<>();
                for (Turn t : held) {
                    fences.add(t.fence());
                }
                result = tracing.workAll(order, fences, turns, () -> handler.handle(set));
            } catch (RuntimeException e) {
                set.exit();
                if (set.isCancelled()) {
                    set.checkCancelled();
                }
                throw e;
            } catch (Exception e) {
                set.exit();
                set.checkCancelled();
                throw new HandlerFailedException(String.join(",", order), "lock-all", e);
            }
            set.exit();
            set.checkCancelled();
            for (int i = held.size() - 1; i >= 0; i--) {
                held.get(i).complete(null);
            }
            return result;
        } finally {
            for (int i = held.size() - 1; i >= 0; i--) {
                Turn t = held.get(i);
                if (!t.finished()) {
                    t.close(); // abort, no requeue
                }
            }
        }
    }

    /** Deduped and sorted by UTF-8 bytes (unsigned), the order every lockAll caller uses. */
    static List<String> lockOrder(Collection<String> lcids) {
        List<String> order = new ArrayList<>(new LinkedHashSet<>(lcids));
        order.sort((a, b) -> Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8)));
        return order;
    }

    // ---------------------------------------------------------------- HTTP, retries, parsing

    /** One answer: status, content type and body text. */
    record Resp(int status, String contentType, String body) {
    }

    private long deadlineFor(int waitMs) {
        return System.nanoTime() + retry.deadline().toNanos() + TimeUnit.MILLISECONDS.toNanos(waitMs);
    }

    private long attemptTimeoutMs(int waitMs) {
        return waitMs > 0 ? Math.max(callTimeout.toMillis(), waitMs + LONG_POLL_GRACE_MS) : callTimeout.toMillis();
    }

    /**
     * Sends the call, retrying with the same body on connection errors, timeouts, 429, 500 and 503 until
     * {@code deadline} (nanoTime). Returns a 2xx answer; throws the typed error otherwise.
     */
    Resp exchange(String method, String path, JsonNode body, long deadline, long attemptTimeoutMs) {
        return exchange(method, path, body, deadline, attemptTimeoutMs, null);
    }

    /** {@link #exchange(String, String, JsonNode, long, long)} with the trace context headers (null: none). */
    Resp exchange(String method, String path, JsonNode body, long deadline, long attemptTimeoutMs, TraceContext trace) {
        String bodyText = body == null ? null : body.toString();
        BatonException last = null;
        for (int attempt = 0; ; attempt++) {
            long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (attempt > 0 && remainingMs <= 0) {
                throw last;
            }
            // Each try is bounded by the time left (a heartbeat must not outlive the holder's deadline); the
            // first one is always made, with its full timeout when no deadline is left (RetryPolicy.NONE).
            long timeoutMs = attempt == 0 && remainingMs <= 0 ? attemptTimeoutMs
                    : Math.max(1, Math.min(attemptTimeoutMs, remainingMs));
            long retryAfterMs = 0;
            try {
                String auth = authorization(false);
                HttpResponse<String> r = sendOnce(method, path, bodyText, timeoutMs, trace, auth);
                if (r.statusCode() == 401 && tokenFile != null) {
                    // The token may have expired just after the kubelet wrote its successor: one more try
                    // with the new content, none when the file still holds the token that was refused.
                    String fresh = authorization(true);
                    if (!fresh.equals(auth)) {
                        r = sendOnce(method, path, bodyText, timeoutMs, trace, fresh);
                    }
                }
                int s = r.statusCode();
                String ct = r.headers().firstValue("Content-Type").orElse(null);
                if (s >= 200 && s < 300) {
                    return new Resp(s, ct, r.body());
                }
                if (!isProblem(ct)) {
                    throw new UnexpectedResponseException(s, ct, r.body(), "not a Baton problem");
                }
                retryAfterMs = retryAfterMs(r.headers().firstValue("Retry-After").orElse(null));
                BatonProblemException p = problem(s, ct, r.body(), retryAfterMs);
                if (s != 429 && s != 500 && s != 503) {
                    throw p;
                }
                last = p;
            } catch (HttpTimeoutException e) {
                last = new BatonTransportException(method + " " + path + ": no answer within " + timeoutMs + " ms", e);
            } catch (IOException e) {
                last = new BatonTransportException(method + " " + path + ": " + e, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BatonTransportException(method + " " + path + ": interrupted", e);
            }
            long sleepMs = retry.backoffMs(attempt, retryAfterMs);
            if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(sleepMs) >= deadline) {
                throw last; // the next try would start after the caller's deadline
            }
            try {
                Thread.sleep(sleepMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BatonTransportException(method + " " + path + ": interrupted", e);
            }
        }
    }

    private HttpResponse<String> sendOnce(String method, String path, String body, long timeoutMs, TraceContext trace,
                                          String authorization) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(baseUrl + path))
                .timeout(Duration.ofMillis(timeoutMs))
                .header("Accept", "application/json, application/problem+json")
                .header("User-Agent", "baton-client-java/" + VERSION);
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        String traceparent = trace == null ? null : headerValue(trace.traceparent());
        if (traceparent != null) {
            b.header("traceparent", traceparent);
            String tracestate = headerValue(trace.tracestate());
            if (tracestate != null) {
                b.header("tracestate", tracestate);
            }
        }
        if (body != null) {
            b.header("Content-Type", "application/json");
            b.method(method, HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        } else if ("POST".equals(method)) {
            b.POST(HttpRequest.BodyPublishers.noBody());
        } else {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    /**
     * The Authorization header value (null: none). A token file is read again when its last read is older than
     * the refresh interval, or at once with {@code reread}. A failed re-read keeps the last token: a rotation can
     * leave the file missing or empty for a moment, while the old token is still valid for minutes.
     */
    private String authorization(boolean reread) {
        if (tokenFile == null) {
            return apiKey == null ? null : "Bearer " + apiKey;
        }
        synchronized (tokenLock) {
            if (reread || System.nanoTime() - tokenReadAt >= tokenRefreshNanos) {
                try {
                    token = readToken(tokenFile);
                    tokenReadAt = System.nanoTime();
                    tokenWarned = false;
                } catch (IOException e) {
                    if (!tokenWarned) {
                        tokenWarned = true;
                        LOG.log(System.Logger.Level.WARNING, "cannot re-read the token file " + tokenFile + " ("
                                + e + "); the last token read is used until it can");
                    }
                }
            }
            return "Bearer " + token;
        }
    }

    /** The file's content, trimmed; never put into a message, as it is a credential. */
    private static String readToken(Path file) throws IOException {
        String t = headerValue(Files.readString(file, StandardCharsets.UTF_8));
        if (t == null) {
            // Also when it has a character a header cannot carry: the HTTP client's error would quote it.
            throw new IOException("empty, or not a bearer token");
        }
        return t;
    }

    /**
     * The value as a header, or null when it cannot be one (empty, or a control or non-ASCII character): the
     * service ignores a trace context it cannot use, so the client drops it rather than fail the call.
     */
    static String headerValue(String v) {
        if (v == null) {
            return null;
        }
        String t = v.trim();
        for (int i = 0; i < t.length(); i++) {
            char c = t.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return null;
            }
        }
        return t.isEmpty() ? null : t;
    }

    private static boolean isProblem(String contentType) {
        return contentType != null && contentType.toLowerCase().startsWith("application/problem+json");
    }

    static long retryAfterMs(String header) {
        if (header == null) {
            return 0;
        }
        try {
            return Math.max(0, Math.round(Double.parseDouble(header.trim()) * 1000));
        } catch (NumberFormatException e) {
            return 0; // an HTTP date: Baton sends seconds; fall back to the backoff
        }
    }

    static BatonProblemException problem(int status, String contentType, String text, long retryAfterMs) {
        JsonNode n;
        try {
            n = MAPPER.readTree(text);
        } catch (JsonProcessingException e) {
            throw new UnexpectedResponseException(status, contentType, text, "problem+json that is not JSON");
        }
        if (n == null || !n.isObject()) {
            throw new UnexpectedResponseException(status, contentType, text, "problem+json that is not an object");
        }
        String code = BatonProblemException.text(n, "code");
        if (code == null) {
            code = "";
        }
        switch (code) {
            case "LOCK_LOST":
                return new LockLostException(n, status, retryAfterMs);
            case "DUPLICATE_REQUEST":
                return new DuplicateRequestException(n, status, retryAfterMs);
            case "BATCH_MISMATCH":
                return new BatchMismatchException(n, status, retryAfterMs);
            case "NOT_QUEUED":
                return new NotQueuedException(n, status, retryAfterMs);
            case "NOT_DEAD":
                return new NotDeadException(n, status, retryAfterMs);
            case "NOT_FOUND":
                return new NotFoundException(n, status, retryAfterMs);
            case "QUEUE_FULL":
                return new QueueFullException(n, status, retryAfterMs);
            case "INVALID_REQUEST":
                return new InvalidRequestException(n, status, retryAfterMs);
            case "UNAUTHORIZED":
                return new UnauthorizedException(n, status, retryAfterMs);
            case "FORBIDDEN":
                return new ForbiddenException(n, status, retryAfterMs);
            case "PAYLOAD_TOO_LARGE":
                return new PayloadTooLargeException(n, status, retryAfterMs);
            case "BACKEND_UNAVAILABLE":
                return new BackendUnavailableException(n, status, retryAfterMs);
            case "INTERNAL_ERROR":
                return new InternalErrorException(n, status, retryAfterMs);
            default:
                return new BatonProblemException(n, status, retryAfterMs);
        }
    }

    private static JsonNode json(Resp r) {
        try {
            JsonNode n = MAPPER.readTree(r.body);
            if (n != null && n.isObject()) {
                return n;
            }
        } catch (JsonProcessingException e) {
            // fall through
        }
        throw new UnexpectedResponseException(r.status, r.contentType, r.body, "expected a JSON object");
    }

    static Outcome parseOutcome(Resp r) {
        JsonNode n = json(r);
        String status = str(n, "status");
        if (status == null) {
            throw new UnexpectedResponseException(r.status, r.contentType, r.body, "no status");
        }
        switch (status) {
            case "ACQUIRED":
                return new Acquired(str(n, "lcid"), str(n, "requestId"), str(n, "token"), n.path("fence").asLong(),
                        n.path("leaseMs").asLong(), str(n, "expiresAt"), str(n, "traceparent"), str(n, "tracestate"));
            case "QUEUED":
                return new Queued(str(n, "lcid"), str(n, "requestId"), n.path("position").asInt(),
                        n.path("queueLength").asInt());
            case "NEXT": {
                List<WorkItem> items = new ArrayList<>();
                JsonNode list = n.get("requests");
                if (list != null && list.isArray() && list.size() > 0) {
                    list.forEach(e -> items.add(workItem(e)));
                } else if (n.hasNonNull("request")) {
                    items.add(workItem(n.get("request"))); // a v1 server sends only `request`
                } else {
                    throw new UnexpectedResponseException(r.status, r.contentType, r.body, "NEXT without requests");
                }
                return new Next(str(n, "lcid"), str(n, "token"), n.path("fence").asLong(), n.path("leaseMs").asLong(),
                        str(n, "expiresAt"), items.get(0), items);
            }
            case "RELEASED":
                return new Released(str(n, "lcid"), n.path("pending").asInt(0), str(n, "passedTo"));
            default:
                throw new UnexpectedResponseException(r.status, r.contentType, r.body, "unknown status " + status);
        }
    }

    private static Released released(Resp r) {
        Outcome o = parseOutcome(r);
        if (o instanceof Released rel) {
            return rel;
        }
        throw new UnexpectedResponseException(r.status, r.contentType, r.body, "expected RELEASED");
    }

    private static WorkItem workItem(JsonNode e) {
        JsonNode p = e.get("payload");
        return new WorkItem(str(e, "requestId"), p == null || p.isNull() ? null : p, e.path("attempt").asInt(1),
                str(e, "traceparent"), str(e, "tracestate"));
    }

    private static String str(JsonNode n, String f) {
        JsonNode v = n.get(f);
        return v == null || v.isNull() ? null : v.asText();
    }

    private static Long optLong(JsonNode n, String f) {
        JsonNode v = n.get(f);
        return v == null || v.isNull() ? null : v.asLong();
    }

    private static void putInt(ObjectNode b, String f, Integer v) {
        if (v != null) {
            b.put(f, v.intValue());
        }
    }

    /** Absent when null: a field sent as null means the default anyway, and absent is the strict-body way. */
    private static void putAny(ObjectNode b, String f, Object v) {
        JsonNode n = toJson(v);
        if (n != null) {
            b.set(f, n);
        }
    }

    private static JsonNode toJson(Object v) {
        if (v == null) {
            return null;
        }
        JsonNode n = v instanceof JsonNode j ? j : MAPPER.valueToTree(v);
        return n == null || n.isNull() || n.isMissingNode() ? null : n;
    }

    private static String lockPath(String lcid) {
        return "/v1/locks/" + seg(lcid);
    }

    /** Percent-encodes a path segment (the lcid alphabet passes unchanged; anything else reaches the 400). */
    static String seg(String s) {
        StringBuilder out = new StringBuilder();
        for (byte c : s.getBytes(StandardCharsets.UTF_8)) {
            int ch = c & 0xff;
            if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.'
                    || ch == '_' || ch == ':' || ch == '@' || ch == '-') {
                out.append((char) ch);
            } else {
                out.append('%').append(String.format("%02X", ch));
            }
        }
        return out.toString();
    }
}
