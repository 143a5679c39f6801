package dev.baton.api;

import dev.baton.lock.ProblemCode;

/** The HTTP status and title of each problem code, as openapi.yaml documents them. */
final class ProblemType {

    private ProblemType() {
    }

    static int status(ProblemCode code) {
        return switch (code) {
            case INVALID_REQUEST -> 400;
            case UNAUTHORIZED -> 401;
            case FORBIDDEN -> 403;
            case NOT_FOUND -> 404;
            case METHOD_NOT_ALLOWED -> 405;
            case NOT_ACCEPTABLE -> 406;
            case LOCK_LOST, DUPLICATE_REQUEST, NOT_QUEUED, NOT_DEAD, BATCH_MISMATCH -> 409;
            case PAYLOAD_TOO_LARGE -> 413;
            case UNSUPPORTED_MEDIA_TYPE -> 415;
            case QUEUE_FULL -> 429;
            case INTERNAL_ERROR -> 500;
            case BACKEND_UNAVAILABLE -> 503;
        };
    }

    static String title(ProblemCode code) {
        return switch (code) {
            case INVALID_REQUEST -> "Invalid request";
            case UNAUTHORIZED -> "Unauthorized";
            case FORBIDDEN -> "Forbidden";
            case NOT_FOUND -> "Not found";
            case METHOD_NOT_ALLOWED -> "Method not allowed";
            case NOT_ACCEPTABLE -> "Not acceptable";
            case LOCK_LOST -> "Lock lost";
            case DUPLICATE_REQUEST -> "Duplicate request";
            case NOT_QUEUED -> "Request is not queued";
            case NOT_DEAD -> "Request is not dead";
            case BATCH_MISMATCH -> "Batch mismatch";
            case PAYLOAD_TOO_LARGE -> "Payload too large";
            case UNSUPPORTED_MEDIA_TYPE -> "Unsupported media type";
            case QUEUE_FULL -> "Queue full";
            case INTERNAL_ERROR -> "Internal error";
            case BACKEND_UNAVAILABLE -> "Backend unavailable";
        };
    }
}
