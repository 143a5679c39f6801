package dev.baton.lock;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import jakarta.enterprise.context.ApplicationScoped;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.baton.config.BatonConfig;
import dev.baton.redis.ScriptCall;

/**
 * The input rules of protocol v1. Each check names the offending field, and runs before any
 * Redis call, so bad input never changes state.
 */
@ApplicationScoped
public class RequestRules {

    private static final IdentifierRule LCID = new IdentifierRule("._:@-", 200);
    private static final IdentifierRule REQUEST_ID = new IdentifierRule("._:@-", 128);
    private static final IdentifierRule TOKEN = new IdentifierRule("_-", 256);
    private static final int MAX_REASON_CHARS = 1024;
    private static final int MAX_LIMIT = 1000;
    private static final int MAX_QUEUE_PAGE = 100;
    /** The largest batch one answer hands over (protocol v1.1 batch handoff). */
    private static final int MAX_TAKE = 100;
    /** The longest long-poll (protocol v1.1), below the usual 60 s of proxies and load balancers. */
    private static final long MAX_WAIT_MS = 30_000;
    private static final String WAIT_MS_RULE = "waitMs must be an integer from 0 to " + MAX_WAIT_MS;

    private final BatonConfig config;
    private final ObjectMapper mapper;

    public RequestRules(BatonConfig config, ObjectMapper mapper) {
        this.config = config;
        this.mapper = mapper;
    }

    public String lcid(String lcid) {
        return matching("lcid", lcid, LCID, "1 to 200 of A-Z a-z 0-9 . _ : @ -");
    }

    /** A claim's lcid prefix: absent means any lcid; else 1 to 200 characters an lcid may hold. */
    public String lcidPrefix(String prefix) {
        return prefix == null ? null
                : matching("lcidPrefix", prefix, LCID, "1 to 200 of A-Z a-z 0-9 . _ : @ - (omit it to claim any lcid)");
    }

    public String requestId(String requestId) {
        return matching("requestId", requestId, REQUEST_ID, "1 to 128 of A-Z a-z 0-9 . _ : @ -");
    }

    public String token(String token) {
        return matching("token", token, TOKEN, "the token of an ACQUIRED or NEXT answer");
    }

    public void body(Object body) {
        if (body == null) {
            throw LockProblem.invalid("body", "a JSON object body is required");
        }
    }

    /** The lease to grant: the configured default when absent, else within the configured bounds. */
    public long leaseMs(Long leaseMs) {
        if (leaseMs == null) {
            return config.lease().defaultMs();
        }
        long min = config.lease().minMs();
        long max = config.lease().maxMs();
        if (leaseMs < min || leaseMs > max) {
            throw LockProblem.invalid("leaseMs", "leaseMs must be between " + min + " and " + max);
        }
        return leaseMs;
    }

    /** The request mode of an acquire: true for {@code wait}; absent means {@code handoff} (v1). */
    public boolean waitMode(String mode) {
        if (mode == null || mode.equals("handoff")) {
            return false;
        }
        if (mode.equals("wait")) {
            return true;
        }
        throw LockProblem.invalid("mode", "mode must be handoff or wait");
    }

    /** How long a call may be held (long-poll): 0 to 30000 ms, 0 when absent. */
    public long waitMs(Long waitMs) {
        if (waitMs == null) {
            return 0;
        }
        if (waitMs < 0 || waitMs > MAX_WAIT_MS) {
            throw LockProblem.invalid("waitMs", WAIT_MS_RULE);
        }
        return waitMs;
    }

    /** The same rule for the query parameter of a view. */
    public long waitMs(String waitMs) {
        if (waitMs == null) {
            return 0;
        }
        try {
            return waitMs(Long.valueOf(waitMs));
        } catch (NumberFormatException e) {
            throw LockProblem.invalid("waitMs", WAIT_MS_RULE);
        }
    }

    /** How many queued handoff requests one answer may hand over (batch handoff): 1 to 100. */
    public int take(Integer take, int absent) {
        if (take == null) {
            return absent;
        }
        if (take < 1 || take > MAX_TAKE) {
            throw LockProblem.invalid("take", "take must be an integer from 1 to " + MAX_TAKE);
        }
        return take;
    }

    /**
     * What a complete finishes: one {@code requestId} (v1), or a whole batch in {@code completed},
     * each request once; never both. Results are checked like payloads.
     */
    public List<ScriptCall.Completion> completions(String requestId, JsonNode result,
            List<? extends Completion> completed) {
        // An empty list next to a requestId is what some generated clients send for "no list".
        if (completed == null || (completed.isEmpty() && requestId != null)) {
            return List.of(new ScriptCall.Completion(requestId(requestId), json("result", result)));
        }
        if (requestId != null || (result != null && !result.isNull())) {
            throw LockProblem.invalid("completed", "send either requestId (and result) or completed, not both");
        }
        if (completed.isEmpty() || completed.size() > MAX_TAKE) {
            throw LockProblem.invalid("completed", "completed must name 1 to " + MAX_TAKE + " requests");
        }
        Set<String> seen = new HashSet<>();
        List<ScriptCall.Completion> completions = new ArrayList<>(completed.size());
        for (int i = 0; i < completed.size(); i++) {
            Completion item = completed.get(i);
            String at = "completed[" + i + "]";
            if (item == null) {
                throw LockProblem.invalid(at, at + " must be an object with requestId and optional result");
            }
            String id = matching(at + ".requestId", item.requestId(), REQUEST_ID, "1 to 128 of A-Z a-z 0-9 . _ : @ -");
            if (!seen.add(id)) {
                throw LockProblem.invalid(at + ".requestId", "request " + id + " is named twice in completed");
            }
            completions.add(new ScriptCall.Completion(id, json(at + ".result", item.result())));
        }
        return completions;
    }

    /** Whether a complete names a batch ({@code completed}) rather than one requestId (v1). */
    public boolean namesBatch(List<? extends Completion> completed) {
        return completed != null && !completed.isEmpty();
    }

    /** One entry of a complete's {@code completed} list, as the API read it. */
    public interface Completion {
        String requestId();

        JsonNode result();
    }

    /** Heartbeat keeps the lease the lock was granted with unless a new one is given. */
    public Long optionalLeaseMs(Long leaseMs) {
        return leaseMs == null ? null : leaseMs(leaseMs);
    }

    /** A listing size: 1 to 1000. */
    public int limit(String limit) {
        return integer("limit", limit, 1, MAX_LIMIT);
    }

    /**
     * A page of a queue: each entry costs Redis a meta decode inside one script, so a page is kept
     * to 100, which holds Redis well under a millisecond.
     */
    public int queueLimit(String limit) {
        return integer("limit", limit, 1, MAX_QUEUE_PAGE);
    }

    /** A page of busy lcids: each is read through its lock view, one short script. */
    public int busyLimit(String limit) {
        return integer("limit", limit, 1, MAX_QUEUE_PAGE);
    }

    /** Where a page starts, from 0. */
    public int offset(String offset) {
        return integer("offset", offset, 0, Integer.MAX_VALUE - MAX_QUEUE_PAGE);
    }

    /** How to order busy lcids: held (the default) or queue. */
    public BusyOrder busyOrder(String order) {
        if (order == null || order.equals("held")) {
            return BusyOrder.HELD;
        }
        if (order.equals("queue")) {
            return BusyOrder.QUEUE;
        }
        throw LockProblem.invalid("order", "order must be held or queue");
    }

    /** A query flag: exactly true or false, absent is false. */
    public boolean flag(String name, String value) {
        if (value == null || value.equals("false")) {
            return false;
        }
        if (value.equals("true")) {
            return true;
        }
        throw LockProblem.invalid(name, name + " must be true or false");
    }

    private static int integer(String name, String value, int min, int max) {
        try {
            int parsed = Integer.parseInt(value);
            if (parsed >= min && parsed <= max) {
                return parsed;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw LockProblem.invalid(name, name + " must be an integer from " + min + " to " + max);
    }

    public String reason(String reason) {
        if (reason != null && reason.length() > MAX_REASON_CHARS) {
            throw LockProblem.invalid("reason", "reason must be at most " + MAX_REASON_CHARS + " characters");
        }
        return reason;
    }

    /** Serialized JSON of a payload or result, or null when absent; 413 above the size limit. */
    public String json(String field, JsonNode value) {
        if (value == null || value.isMissingNode() || value.isNull()) {
            return null;
        }
        String json;
        try {
            json = mapper.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw LockProblem.invalid(field, field + " is not serializable JSON");
        }
        int bytes = json.getBytes(StandardCharsets.UTF_8).length;
        int limit = config.payload().maxBytes();
        if (bytes > limit) {
            throw LockProblem.tooLarge(field, field + " is " + bytes + " bytes of JSON, the limit is " + limit);
        }
        return json;
    }

    private static String matching(String field, String value, IdentifierRule identifier, String rule) {
        if (value == null) {
            throw LockProblem.invalid(field, field + " is required");
        }
        if (!identifier.matches(value)) {
            throw LockProblem.invalid(field, field + " must be " + rule);
        }
        return value;
    }
}
