package dev.baton.lock;

/** The stable machine codes of problem responses, with the HTTP status each one carries. */
public enum ProblemCode {
    INVALID_REQUEST(400, "Invalid request"),
    UNAUTHORIZED(401, "Unauthorized"),
    FORBIDDEN(403, "Forbidden"),
    NOT_FOUND(404, "Not found"),
    METHOD_NOT_ALLOWED(405, "Method not allowed"),
    NOT_ACCEPTABLE(406, "Not acceptable"),
    LOCK_LOST(409, "Lock lost"),
    DUPLICATE_REQUEST(409, "Duplicate request"),
    NOT_QUEUED(409, "Request is not queued"),
    NOT_DEAD(409, "Request is not dead"),
    PAYLOAD_TOO_LARGE(413, "Payload too large"),
    UNSUPPORTED_MEDIA_TYPE(415, "Unsupported media type"),
    QUEUE_FULL(429, "Queue full"),
    INTERNAL_ERROR(500, "Internal error"),
    BACKEND_UNAVAILABLE(503, "Backend unavailable");

    private final int status;
    private final String title;

    ProblemCode(int status, String title) {
        this.status = status;
        this.title = title;
    }

    public int status() {
        return status;
    }

    public String title() {
        return title;
    }
}
