package dev.baton.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * The calls: one method per endpoint of protocol v1.2 (bodies with only the fields set, as the service reads them
 * strictly), over {@link Retries}, and the parsing of their answers into the typed outcomes. The holder, the
 * waits and the claim poller are built on these; {@link BatonClient} offers them as its public methods.
 */
final class Calls {
    static final int MAX_WAIT_MS = 30_000;
    private static final long LONG_POLL_GRACE_MS = 5_000;
    private static final int MAX_REASON = 1024;

    private final Retries retries;
    private final Duration callTimeout;
    private final Tracing tracing;

    Calls(Retries retries, Duration callTimeout, Tracing tracing) {
        this.retries = retries;
        this.callTimeout = callTimeout;
        this.tracing = tracing;
    }

    Tracing tracing() {
        return tracing;
    }

    /** The deadline (nanoTime) of a call starting now; a long-poll's wait is added to it. */
    long deadlineFor(int waitMs) {
        return retries.deadlineFor(waitMs);
    }

    private long attemptTimeoutMs(int waitMs) {
        return waitMs > 0 ? Math.max(callTimeout.toMillis(), waitMs + LONG_POLL_GRACE_MS) : callTimeout.toMillis();
    }

    private Http.Resp post(String path, JsonNode body, long deadline) {
        return retries.exchange("POST", path, body == null ? null : body.toString(), deadline, callTimeout.toMillis(),
                null, null);
    }

    // ---------------------------------------------------------------- the lock calls

    Outcome acquire(String lcid, AcquireRequest req) {
        int waitMs = req.waitMs() == null ? 0 : req.waitMs();
        return acquireUntil(lcid, req, deadlineFor(waitMs));
    }

    Outcome acquireUntil(String lcid, AcquireRequest req, long deadline) {
        ObjectNode b = Http.MAPPER.createObjectNode();
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
        return parseOutcome(retries.exchange("POST", lockPath(lcid) + "/acquire", b.toString(), deadline,
                attemptTimeoutMs(waitMs), trace, null));
    }

    Acquired heartbeat(String lcid, String token, Integer leaseMs) {
        return heartbeatUntil(lcid, token, leaseMs, deadlineFor(0));
    }

    /** A heartbeat whose retries end at {@code deadline} (the holder's own lease deadline). */
    Acquired heartbeatUntil(String lcid, String token, Integer leaseMs, long deadline) {
        ObjectNode b = Http.MAPPER.createObjectNode();
        b.put("token", token);
        putInt(b, "leaseMs", leaseMs);
        Outcome o = parseOutcome(post(lockPath(lcid) + "/heartbeat", b, deadline));
        if (o instanceof Acquired a) {
            return a;
        }
        throw new UnexpectedResponseException(200, "application/json", o.toString(), "heartbeat did not answer ACQUIRED");
    }

    Outcome complete(String lcid, String token, String requestId, Object result, Integer take) {
        ObjectNode b = Http.MAPPER.createObjectNode();
        b.put("token", token);
        b.put("requestId", requestId);
        putAny(b, "result", result);
        putInt(b, "take", take);
        return parseOutcome(post(lockPath(lcid) + "/complete", b, deadlineFor(0)));
    }

    Outcome complete(String lcid, String token, List<Completion> completed, Integer take) {
        ObjectNode b = Http.MAPPER.createObjectNode();
        b.put("token", token);
        ArrayNode list = b.putArray("completed");
        for (Completion c : completed) {
            ObjectNode e = list.addObject();
            e.put("requestId", c.requestId());
            putAny(e, "result", c.result());
        }
        putInt(b, "take", take);
        return parseOutcome(post(lockPath(lcid) + "/complete", b, deadlineFor(0)));
    }

    Released abort(String lcid, String token, String requestId, boolean requeue, String reason) {
        ObjectNode b = Http.MAPPER.createObjectNode();
        b.put("requestId", requestId);
        b.put("token", token);
        if (requeue) {
            b.put("requeue", true);
        }
        if (reason != null) {
            b.put("reason", cutReason(reason));
        }
        return released(post(lockPath(lcid) + "/abort", b, deadlineFor(0)));
    }

    Released withdraw(String lcid, String requestId, String reason) {
        ObjectNode b = Http.MAPPER.createObjectNode();
        b.put("requestId", requestId);
        if (reason != null) {
            b.put("reason", cutReason(reason));
        }
        return released(post(lockPath(lcid) + "/abort", b, deadlineFor(0)));
    }

    // ---------------------------------------------------------------- views

    LockView lock(String lcid) {
        return lockUntil(lcid, deadlineFor(0));
    }

    /** The lock view with retries until {@code deadline} (a deadline already passed: one attempt). */
    LockView lockUntil(String lcid, long deadline) {
        JsonNode n = json(retries.exchange("GET", lockPath(lcid), null, deadline, callTimeout.toMillis(), null, null));
        List<String> ids = new ArrayList<>();
        JsonNode a = n.get("activeRequestIds");
        if (a != null && a.isArray()) {
            a.forEach(e -> ids.add(e.asText()));
        }
        return new LockView(str(n, "lcid"), n.path("held").asBoolean(), optLong(n, "fence"),
                str(n, "activeRequestId"), ids, optLong(n, "heldForMs"), n.path("leaseRemainingMs").asLong(),
                n.path("queueLength").asInt());
    }

    RequestView request(String lcid, String requestId, int waitMs) {
        return requestUntil(lcid, requestId, waitMs, deadlineFor(waitMs));
    }

    RequestView requestUntil(String lcid, String requestId, int waitMs, long deadline) {
        String path = lockPath(lcid) + "/requests/" + seg(requestId) + (waitMs > 0 ? "?waitMs=" + waitMs : "");
        JsonNode n = json(retries.exchange("GET", path, null, deadline, attemptTimeoutMs(waitMs), null, null));
        JsonNode pos = n.get("position");
        JsonNode res = n.get("result");
        return new RequestView(str(n, "lcid"), str(n, "requestId"), str(n, "state"),
                pos == null || pos.isNull() ? null : pos.asInt(), n.path("attempt").asInt(), optLong(n, "fence"),
                res == null || res.isNull() ? null : res, str(n, "reason"), str(n, "traceparent"), str(n, "tracestate"));
    }

    // ---------------------------------------------------------------- claims and operator calls

    /** A claim; {@code stop} (null: never) ends it at once, retries included ({@link Stopped}). */
    Optional<Next> claim(ClaimOptions o, BooleanSupplier stop) {
        ObjectNode b = Http.MAPPER.createObjectNode();
        if (o.lcidPrefix() != null) {
            b.put("lcidPrefix", o.lcidPrefix());
        }
        putInt(b, "leaseMs", o.leaseMs());
        putInt(b, "take", o.take());
        Http.Resp r = retries.exchange("POST", "/v1/claims", b.toString(), deadlineFor(0), callTimeout.toMillis(), null,
                stop);
        if (r.status() == 204) {
            return Optional.empty();
        }
        Outcome out = parseOutcome(r);
        if (out instanceof Next n) {
            return Optional.of(n);
        }
        throw new UnexpectedResponseException(r.status(), r.contentType(), r.body(), "a claim answers NEXT or 204");
    }

    List<DeadLetter> deadLetters(int limit) {
        JsonNode n = json(retries.exchange("GET", "/v1/dead-letters?limit=" + limit, null, deadlineFor(0),
                callTimeout.toMillis(), null, null));
        List<DeadLetter> out = new ArrayList<>();
        for (JsonNode e : n.path("items")) {
            JsonNode p = e.get("payload");
            out.add(new DeadLetter(str(e, "lcid"), str(e, "requestId"), e.path("attempts").asInt(), str(e, "reason"),
                    p == null || p.isNull() ? null : p, str(e, "diedAt")));
        }
        return out;
    }

    Queued retryDeadLetter(String lcid, String requestId) {
        Http.Resp r = post(lockPath(lcid) + "/requests/" + seg(requestId) + "/retry", null, deadlineFor(0));
        Outcome o = parseOutcome(r);
        if (o instanceof Queued q) {
            return q;
        }
        throw new UnexpectedResponseException(r.status(), r.contentType(), r.body(), "a retry of a dead letter answers QUEUED");
    }

    // ---------------------------------------------------------------- parsing

    private static JsonNode json(Http.Resp r) {
        try {
            JsonNode n = Http.MAPPER.readTree(r.body());
            if (n != null && n.isObject()) {
                return n;
            }
        } catch (JsonProcessingException e) {
            // fall through
        }
        throw new UnexpectedResponseException(r.status(), r.contentType(), r.body(), "expected a JSON object");
    }

    static Outcome parseOutcome(Http.Resp r) {
        JsonNode n = json(r);
        String status = str(n, "status");
        if (status == null) {
            throw new UnexpectedResponseException(r.status(), r.contentType(), r.body(), "no status");
        }
        switch (status) {
            case "ACQUIRED":
                // attempt: protocol v1.2; an older service sends none, and its grants are first attempts as far as
                // the client can tell.
                return new Acquired(str(n, "lcid"), str(n, "requestId"), str(n, "token"), n.path("fence").asLong(),
                        n.path("leaseMs").asLong(), str(n, "expiresAt"), str(n, "traceparent"), str(n, "tracestate"),
                        intOr(n, "attempt", 1));
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
                    throw new UnexpectedResponseException(r.status(), r.contentType(), r.body(), "NEXT without requests");
                }
                return new Next(str(n, "lcid"), str(n, "token"), n.path("fence").asLong(), n.path("leaseMs").asLong(),
                        str(n, "expiresAt"), items.get(0), items);
            }
            case "RELEASED":
                return new Released(str(n, "lcid"), n.path("pending").asInt(0), str(n, "passedTo"));
            default:
                throw new UnexpectedResponseException(r.status(), r.contentType(), r.body(), "unknown status " + status);
        }
    }

    private static Released released(Http.Resp r) {
        Outcome o = parseOutcome(r);
        if (o instanceof Released rel) {
            return rel;
        }
        throw new UnexpectedResponseException(r.status(), r.contentType(), r.body(), "expected RELEASED");
    }

    private static WorkItem workItem(JsonNode e) {
        JsonNode p = e.get("payload");
        return new WorkItem(str(e, "requestId"), p == null || p.isNull() ? null : p, intOr(e, "attempt", 1),
                str(e, "traceparent"), str(e, "tracestate"));
    }

    private static String str(JsonNode n, String f) {
        JsonNode v = n.get(f);
        return v == null || v.isNull() ? null : v.asText();
    }

    private static int intOr(JsonNode n, String f, int absent) {
        JsonNode v = n.get(f);
        return v == null || !v.canConvertToInt() ? absent : v.asInt();
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

    /** A payload or result as JSON (null: none); IllegalArgumentException when it cannot be serialized. */
    static JsonNode toJson(Object v) {
        if (v == null) {
            return null;
        }
        JsonNode n = v instanceof JsonNode j ? j : Http.MAPPER.valueToTree(v);
        return n == null || n.isNull() || n.isMissingNode() ? null : n;
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
