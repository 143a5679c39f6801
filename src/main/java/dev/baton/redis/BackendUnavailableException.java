package dev.baton.redis;

/** Redis could not be reached, answered too slowly, or is temporarily unable to serve. */
public class BackendUnavailableException extends RuntimeException {
    public BackendUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
