package dev.baton.lock;

/**
 * The stable machine codes of refusals and failures (protocol "Errors"), as clients match on
 * them. How each one travels over HTTP is the API's business (api/ProblemType).
 */
public enum ProblemCode {
    INVALID_REQUEST,
    UNAUTHORIZED,
    FORBIDDEN,
    NOT_FOUND,
    METHOD_NOT_ALLOWED,
    NOT_ACCEPTABLE,
    LOCK_LOST,
    DUPLICATE_REQUEST,
    NOT_QUEUED,
    NOT_DEAD,
    BATCH_MISMATCH,
    PAYLOAD_TOO_LARGE,
    UNSUPPORTED_MEDIA_TYPE,
    QUEUE_FULL,
    INTERNAL_ERROR,
    BACKEND_UNAVAILABLE
}
