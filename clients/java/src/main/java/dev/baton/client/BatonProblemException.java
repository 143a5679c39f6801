package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The service answered an {@code application/problem+json} error. Match on {@link #code()} (or on the
 * subclass); {@link #detail()} is for humans. {@link #body()} is the whole problem (state, attempt,
 * result, activeRequestIds, ...).
 */
public class BatonProblemException extends BatonException {
    private final String code;
    private final int status;
    private final String type;
    private final String title;
    private final String detail;
    private final String field;
    private final JsonNode body;
    private final long retryAfterMs;

    public BatonProblemException(JsonNode body, int status, long retryAfterMs) {
        this(body, status, retryAfterMs, message(body, status));
    }

    /** With a message of its own (a problem the client made up, such as a lock it decided was lost). */
    BatonProblemException(JsonNode body, int status, long retryAfterMs, String message) {
        super(message);
        this.body = body;
        this.status = status;
        this.code = text(body, "code");
        this.type = text(body, "type");
        this.title = text(body, "title");
        this.detail = text(body, "detail");
        this.field = text(body, "field");
        this.retryAfterMs = retryAfterMs;
    }

    static String text(JsonNode body, String name) {
        JsonNode n = body == null ? null : body.get(name);
        return n == null || n.isNull() ? null : n.asText();
    }

    private static String message(JsonNode body, int status) {
        String code = text(body, "code");
        String detail = text(body, "detail");
        String field = text(body, "field");
        return status + " " + (code == null ? "problem" : code) + (detail == null ? "" : ": " + detail)
                + (field == null ? "" : " (field " + field + ")");
    }

    /** The machine code, e.g. {@code LOCK_LOST}. */
    public String code() {
        return code;
    }

    /** The HTTP status (0 for a problem the client decided itself: {@link LockLostException#byClient()}). */
    public int status() {
        return status;
    }

    /** {@code urn:baton:problem:...}. */
    public String type() {
        return type;
    }

    public String title() {
        return title;
    }

    public String detail() {
        return detail;
    }

    /** The offending field's path (INVALID_REQUEST, PAYLOAD_TOO_LARGE), or null. */
    public String field() {
        return field;
    }

    /** The whole problem body. */
    public JsonNode body() {
        return body;
    }

    /** The answer's Retry-After in ms (429, 503), 0 when none. */
    public long retryAfterMs() {
        return retryAfterMs;
    }

    /** {@code state} of DUPLICATE_REQUEST, NOT_QUEUED, NOT_DEAD, else null. */
    public String state() {
        return text(body, "state");
    }

    /** {@code attempt} of DUPLICATE_REQUEST, NOT_QUEUED, NOT_DEAD, else null. */
    public Integer attempt() {
        JsonNode n = body == null ? null : body.get("attempt");
        return n == null || !n.canConvertToInt() ? null : n.asInt();
    }
}
