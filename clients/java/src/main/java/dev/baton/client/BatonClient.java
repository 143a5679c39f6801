package dev.baton.client;

import com.fasterxml.jackson.databind.ObjectMapper;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The Baton client: every call of protocol v1.2, the holder loop, wait-mode turns, the claim poller and ordered
 * locks on several lcids. Every deployment that uses {@link #run} also runs a claim poller ({@link #runClaims}) for
 * its lcids, in this process or another: a request nobody holds (after a handler threw, a holder died, or behind a
 * turn) is done only by a claim poller or the next acquire on its lcid
 * (docs/claims-and-dead-letters.md#who-rescues-what).
 *
 * <pre>{@code
 * try (BatonClient baton = BatonClient.builder("http://127.0.0.1:8080").apiKey(key).build()) {
 *     AtomicBoolean stopping = new AtomicBoolean();
 *     Thread poller = new Thread(() -> baton.runClaims(work -> apply(work),      // rescues what no holder does
 *             ClaimOptions.defaults().lcidPrefix("order-").stop(stopping::get)));
 *     poller.start();
 *     RunReport r = baton.run("order-7", work -> apply(work),                    // fenced writes: work.fence()
 *             RunOptions.of("order-7-pay").payload(Map.of("amount", 5)));
 *     stopping.set(true);
 * }
 * }</pre>
 *
 * <p>Every call is retried with the same body after a connection error, a timeout, 429, 500 or 503 (see
 * {@link RetryPolicy}); that is safe because Baton answers every call from what is stored. Other 4xx answers
 * and answers that are not problem+json are never retried. Thread safe; one client per process is enough
 * (it keeps its HTTP connections alive). {@link #close()} stops the heartbeat threads.
 *
 * <p>This class is the facade over the client's parts, each in its own file and each using only the ones before
 * it: {@code Http} (transport, credentials) &lt;- {@code Retries} &lt;- {@code Calls} (one method per endpoint)
 * &lt;- {@code Holder} / {@code Holding} (run, the lease), {@code Waits} (turns, lockAll), {@code Claims} (the
 * poller) &lt;- this.
 */
public final class BatonClient implements AutoCloseable {
    /** The version of this client, which is the protocol version it speaks. */
    public static final String VERSION = Version.CLIENT;

    private final ExecutorService executor;
    private final Calls calls;
    private final Holder holder;
    private final Waits waits;
    private final Claims claims;

    private BatonClient(Builder b) {
        AtomicInteger n = new AtomicInteger();
        // Heartbeat loops, cancellation listeners and the HTTP client's own work: daemon threads that never block
        // the JVM's exit.
        this.executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "baton-client-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        Http http;
        try {
            http = new Http(b.url, b.apiKey, b.tokenFile, b.tokenRefresh, b.connectTimeout, executor,
                    "baton-client-java/" + Version.CLIENT);
        } catch (RuntimeException e) {
            executor.shutdownNow();
            throw e;
        }
        this.calls = new Calls(new Retries(http, b.retryPolicy), b.callTimeout, b.tracing);
        this.holder = new Holder(calls, executor, b.tracing);
        this.waits = new Waits(calls, holder, b.tracing);
        this.claims = new Claims(calls, holder);
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
        return Http.MAPPER;
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
        return calls.acquire(lcid, req);
    }

    /** {@code POST .../heartbeat}: renew the lease (null leaseMs: the lease in force). */
    public Acquired heartbeat(String lcid, String token, Integer leaseMs) {
        return calls.heartbeat(lcid, token, leaseMs);
    }

    /** {@code POST .../heartbeat} with the lease in force. */
    public Acquired heartbeat(String lcid, String token) {
        return heartbeat(lcid, token, null);
    }

    /**
     * {@code POST .../complete} of one request with its result (null: none); {@code take} (null: default) is
     * how many queued requests to take next. Answers {@link Next} or {@link Released}.
     */
    public Outcome complete(String lcid, String token, String requestId, Object result, Integer take) {
        return calls.complete(lcid, token, requestId, result, take);
    }

    /** {@code POST .../complete} of one request, taking the default number next. */
    public Outcome complete(String lcid, String token, String requestId, Object result) {
        return complete(lcid, token, requestId, result, null);
    }

    /** {@code POST .../complete} of a whole batch ({@code completed}: every active request, each once). */
    public Outcome complete(String lcid, String token, List<Completion> completed, Integer take) {
        return calls.complete(lcid, token, completed, take);
    }

    /**
     * {@code POST .../abort} by the holder: give up the active request (the whole batch); with {@code requeue}
     * it goes back to the head with attempt + 1. {@code reason} (null: default) is cut to 1024 characters.
     */
    public Released abort(String lcid, String token, String requestId, boolean requeue, String reason) {
        return calls.abort(lcid, token, requestId, requeue, reason);
    }

    /**
     * {@code POST .../abort} without a token: withdraw a QUEUED request. {@link NotQueuedException} when it no
     * longer waits (its state says where it is), {@link NotFoundException} when unknown.
     */
    public Released withdraw(String lcid, String requestId, String reason) {
        return calls.withdraw(lcid, requestId, reason);
    }

    /** {@code GET /v1/locks/{lcid}}: the lock view (never the token). */
    public LockView lock(String lcid) {
        return calls.lock(lcid);
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
        return calls.request(lcid, requestId, waitMs);
    }

    /** {@code POST /v1/claims}: orphaned work of any lcid (or of lcids with the prefix); empty on 204. */
    public Optional<Next> claim(ClaimOptions o) {
        return calls.claim(o, null);
    }

    /** {@code GET /v1/dead-letters?limit=N} (admin key): DEAD requests, newest first. */
    public List<DeadLetter> deadLetters(int limit) {
        return calls.deadLetters(limit);
    }

    /**
     * {@code POST .../requests/{requestId}/retry} (admin key): queue a DEAD request again (attempt 1).
     * {@link NotDeadException} when it is not DEAD (also when a repeated retry already succeeded).
     */
    public Queued retryDeadLetter(String lcid, String requestId) {
        return calls.retryDeadLetter(lcid, requestId);
    }

    // ---------------------------------------------------------------- the holder

    /**
     * Submits a request on {@code lcid} and, while this caller holds the lock, runs {@code handler} on each
     * request (or batch) it is handed, heartbeating in the background, completing with the handler's result
     * and going on with the next, until RELEASED.
     *
     * <ul>
     * <li>QUEUED: the request is stored and another holder or a claim poller does it: returns at once. Also when
     * the acquire was sent more than once and answered DUPLICATE_REQUEST with state ACTIVE or DONE (its first
     * attempt stored the request; no position). On a first send, DUPLICATE_REQUEST fails the run: the requestId
     * was used before.</li>
     * <li>RELEASED: this call held the lock until it had nothing more to do. That does not mean the caller's own
     * request was done: the lock can pass to a {@code wait} request queued ahead of it
     * ({@link Released#passedTo()}), and the request is then done later by the next holder of the lcid or a claim
     * poller. {@link RunReport#handledOwn()} says whether it was done here; {@link #awaitResult} tells when.</li>
     * <li>{@link RunOptions#onSubmit} is called exactly once, as soon as Baton acknowledged the request and before
     * any handler.</li>
     * <li>The handler throws: the request is aborted with {@code requeue: true} and the error's message as the
     * reason: it is back at the head of its lcid with no holder, and a claim poller (or the next acquire on that
     * lcid) does it. The run fails with the handler's error as the cause.</li>
     * <li>The lock is lost (LOCK_LOST, or no renewal before the holder's deadline): the handler's thread is
     * interrupted, nothing is completed for it, and the run fails with a {@link LockLostException} as the
     * cause.</li>
     * </ul>
     *
     * <p>With OpenTelemetry in the application, each handler call runs in a span {@code baton.work} linked to
     * the trace context its request(s) were submitted with (see {@link RunOptions#trace()}).
     *
     * @throws RunFailedException whatever failed (the handler, the lock, a call after its retries), as the cause,
     *                            with {@link RunFailedException#report()}: what was handled until then
     */
    public RunReport run(String lcid, Handler handler, RunOptions o) {
        return holder.run(lcid, handler, o);
    }

    /** {@link #run(String, Handler, RunOptions)} with a random requestId and no payload. */
    public RunReport run(String lcid, Handler handler) {
        return run(lcid, handler, RunOptions.defaults());
    }

    // ---------------------------------------------------------------- wait mode

    /**
     * Submits (or repeats) a {@code wait} request and long-polls until its turn, then picks the turn up: the
     * returned {@link Turn} holds the lock (heartbeats run in the background) until complete or abort. The turn is
     * live when returned, however long the wait: when more than a third of its lease passed since the pick-up call
     * was sent, it is renewed first ({@link LockLostException} if that renewal answers LOCK_LOST).
     *
     * <p>The wait keeps its place unless the caller gives up: on {@code timeout} the request is withdrawn (or, if
     * its turn was just granted, picked up and aborted) and {@link BatonTimeoutException} is thrown; so on an
     * interruption ({@link BatonTransportException#interrupted()}). Any other failure (a transport error or 503
     * past the retry deadline, an unexpected answer) is thrown without withdrawing: the request stays queued, and
     * awaitTurn with the same requestId waits on in the same place. While it waits, work nobody holds ahead of it
     * (no holder, requests queued, twice in a row) is reported with one warning in the log.
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
        return waits.awaitTurn(lcid, requestId, payload, leaseMs, timeout, trace);
    }

    /**
     * Long-polls the request view until the request has ended (DONE with its result, ABORTED, DEAD).
     * {@link BatonTimeoutException} when {@code timeout} passes first; {@link NotFoundException} if unknown.
     */
    public RequestView awaitResult(String lcid, String requestId, Duration timeout) {
        return waits.awaitResult(lcid, requestId, timeout);
    }

    // ---------------------------------------------------------------- claims

    /**
     * The continuous claim poller: claims; on work runs the holder loop on that lcid and claims again at
     * once; on 204 sleeps a random 200 ms to 1 s and claims again, until {@link ClaimOptions#stop()} says so or
     * the thread is interrupted. It never stops at an empty claim: work becomes claimable later than the call
     * that orphaned it. Every handler error, lost lock and failed claim goes to {@link ClaimOptions#onError()}
     * (default: a warning in the log) and polling goes on. Stopping ends a claim in flight at once, its retries
     * included; the holder loop in hand runs to its end.
     *
     * @return what it did: claims answered with work, requests handled, errors passed to onError
     */
    public ClaimReport runClaims(Handler handler, ClaimOptions o) {
        return claims.run(handler, o);
    }

    // ---------------------------------------------------------------- several lcids

    /**
     * Holds the locks of every lcid at once: dedupes, sorts them by UTF-8 bytes (one global order, so two
     * callers never wait for each other in a cycle), takes a {@code wait} turn on each in that order (fresh
     * random requestIds), runs {@code handler} with every fence, then completes in reverse order. On any
     * failure (a timeout, a failed call, the handler, a lock lost) it gives up as a whole: it aborts (no requeue)
     * what it holds and withdraws what it waits for, and rethrows (a handler's checked exception wrapped in
     * {@link HandlerFailedException}).
     *
     * <p>Each lock is still its own: nothing is atomic across lcids. Make the writes to all entities in one
     * database transaction fenced with every fence, or make them safe to redo. {@code handoff} requests
     * ({@link #run}) on the same lcids queue like everyone else's: after a turn, one at the head waits for a claim
     * poller, and every later lockAll waits behind it. Run a claim poller when lockAll and run share lcids.
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
        return waits.lockAll(lcids, handler, leaseMs, timeout, trace);
    }
}
