package dev.baton.client;

/**
 * Every error this client throws. Unchecked, so that calls compose inside handlers and lambdas; catch the
 * subclasses a program branches on ({@link LockLostException}, {@link DuplicateRequestException}, ...).
 */
public class BatonException extends RuntimeException {
    public BatonException(String message) {
        super(message);
    }

    public BatonException(String message, Throwable cause) {
        super(message, cause);
    }
}
