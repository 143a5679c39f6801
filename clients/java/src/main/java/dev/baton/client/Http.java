package dev.baton.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * The transport, the bottom part of the client: one HTTP exchange with the service (HTTP/1.1 with keep-alive,
 * {@code java.net.http}), the credentials it carries (an API key, or a token file read again as it is replaced),
 * and the typed error for every answer that is not 2xx. It never retries ({@link Retries} does) and refers to no
 * other part of the client (clients/README.md, "How each client is built").
 */
final class Http {
    private static final System.Logger LOG = System.getLogger("dev.baton.client");
    /** How often a stoppable exchange looks at its stop condition while it waits for the answer. */
    private static final long STOP_POLL_MS = 20;
    static final ObjectMapper MAPPER = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    /** One answer: status, content type and body text. */
    record Resp(int status, String contentType, String body) {
    }

    private final String baseUrl;
    private final String host;
    private final int port;
    private final String userAgent;
    private final String apiKey;
    private final Path tokenFile;
    private final long tokenRefreshNanos;
    private final Object tokenLock = new Object();
    private String token;          // the token file's last good content (guarded by tokenLock)
    private long tokenReadAt;      // nanoTime of that read
    private boolean tokenWarned;   // a failed re-read was reported since
    private final HttpClient client;

    /**
     * @throws IllegalArgumentException the URL has no host, or the token file cannot be read (named, never its
     *                                  content)
     */
    Http(String url, String apiKey, Path tokenFile, Duration tokenRefresh, Duration connectTimeout, Executor executor,
         String userAgent) {
        String u = url;
        while (u.endsWith("/")) {
            u = u.substring(0, u.length() - 1);
        }
        this.baseUrl = u;
        URI uri = URI.create(u);
        if (uri.getHost() == null) {
            throw new IllegalArgumentException("not an http(s) URL with a host: " + url);
        }
        this.host = uri.getHost();
        this.port = uri.getPort() != -1 ? uri.getPort() : "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
        this.userAgent = userAgent;
        this.apiKey = apiKey;
        this.tokenFile = tokenFile;
        this.tokenRefreshNanos = tokenRefresh.toNanos();
        if (tokenFile != null) {
            try {
                token = readToken(tokenFile);
            } catch (IOException e) {
                // Fail at start rather than with a 401 on the first call, far from the misconfiguration.
                throw new IllegalArgumentException("cannot read the token file " + tokenFile + ": " + e, e);
            }
            tokenReadAt = System.nanoTime();
        }
        // HTTP/1.1 with keep-alive (the default of java.net.http); no h2c upgrade dance on plain HTTP.
        this.client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(connectTimeout)
                .executor(executor)
                .build();
    }

    /** The service's {@code host:port}, as warnings and transport errors name it. */
    String hostPort() {
        return host + ":" + port;
    }

    /**
     * One exchange (sent once more at once after a 401 when the token file changed since it was read). Returns a
     * 2xx answer; throws {@link BatonProblemException} (typed by its code) for a problem+json answer,
     * {@link UnexpectedResponseException} for any other, {@link BatonTransportException} when there is no answer
     * (naming host and port), and {@link Stopped} when {@code stop} (null: never) turned true while it waited.
     */
    Resp send(String method, String path, String body, long timeoutMs, TraceContext trace, BooleanSupplier stop) {
        String auth = authorization(false);
        HttpResponse<String> r = sendOnce(method, path, body, timeoutMs, trace, auth, stop);
        if (r.statusCode() == 401 && tokenFile != null) {
            // The token may have expired just after the kubelet wrote its successor: one more try with the new
            // content, none when the file still holds the token that was refused.
            String fresh = authorization(true);
            if (!fresh.equals(auth)) {
                r = sendOnce(method, path, body, timeoutMs, trace, fresh, stop);
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
        throw problem(s, ct, r.body(), retryAfterMs(r.headers().firstValue("Retry-After").orElse(null)));
    }

    private HttpResponse<String> sendOnce(String method, String path, String body, long timeoutMs, TraceContext trace,
                                          String authorization, BooleanSupplier stop) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(baseUrl + path))
                .timeout(Duration.ofMillis(timeoutMs))
                .header("Accept", "application/json, application/problem+json")
                .header("User-Agent", userAgent);
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
        CompletableFuture<HttpResponse<String>> f = client.sendAsync(b.build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        try {
            if (stop == null) {
                return f.get();
            }
            while (true) {
                try {
                    return f.get(STOP_POLL_MS, TimeUnit.MILLISECONDS);
                } catch (TimeoutException notYet) {
                    if (stop.getAsBoolean()) {
                        // Given up, not waited out: whatever answer comes now is not read. (A claim whose answer is
                        // lost this way comes back after its lease, as the protocol says of any lost claim answer.)
                        f.cancel(true);
                        throw new Stopped(method + " " + path + ": stopped by the caller");
                    }
                }
            }
        } catch (InterruptedException e) {
            f.cancel(true);
            Thread.currentThread().interrupt();
            throw new BatonTransportException(method + " " + path + ": interrupted", e, host, port);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            while (c instanceof CompletionException && c.getCause() != null) {
                c = c.getCause();
            }
            if (c instanceof IOException io) {
                throw new BatonTransportException(describe(io, timeoutMs) + " (" + method + " " + path + ")", io, host,
                        port);
            }
            if (c instanceof RuntimeException re) {
                throw re;
            }
            throw new BatonTransportException(method + " " + path + ": " + c + " (" + hostPort() + ")", c, host, port);
        }
    }

    /**
     * What went wrong, always naming host and port: {@code connection refused: 127.0.0.1:8081}, so that a wrong URL
     * shows in the first failure, not after the retry deadline.
     */
    private String describe(IOException e, long timeoutMs) {
        String at = hostPort();
        if (e instanceof HttpConnectTimeoutException) {
            return "no connection within the connect timeout: " + at;
        }
        if (e instanceof HttpTimeoutException) {
            return "no answer within " + timeoutMs + " ms: " + at;
        }
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof UnresolvedAddressException) {
                return "cannot resolve the host: " + at;
            }
        }
        if (e instanceof ConnectException) {
            String why = firstMessage(e);
            return why == null || why.toLowerCase(Locale.ROOT).contains("refused") ? "connection refused: " + at
                    : "cannot connect (" + why + "): " + at;
        }
        String why = firstMessage(e);
        return e.getClass().getSimpleName() + (why == null ? "" : " (" + why + ")") + ": " + at;
    }

    private static String firstMessage(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c.getMessage() != null && !c.getMessage().isBlank()) {
                return c.getMessage();
            }
        }
        return null;
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
        return contentType != null && contentType.toLowerCase(Locale.ROOT).startsWith("application/problem+json");
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

    /** The typed error of a problem+json answer. */
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
        switch (code == null ? "" : code) {
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
}
