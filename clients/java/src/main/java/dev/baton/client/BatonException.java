package dev.baton.client;

/**
 * Every error this client throws. Unchecked, so that calls compose inside handlers and lambdas; catch the
 * subclasses a program branches on ({@link LockLostException}, {@link DuplicateRequestException}, ...).
 */
public class BatonException extends RuntimeException {
    /**
     * How many times the call that failed was sent (its first attempt and its retries; 0 when no call was made).
     * {@code run} reads it: a DUPLICATE_REQUEST after more than one attempt means its own first attempt stored the
     * request and only the answer was lost.
     */
    int attempts;

    public BatonException(String message) {
        super(message);
    }

    public BatonException(String message, Throwable cause) {
        super(message, cause);
    }
}
