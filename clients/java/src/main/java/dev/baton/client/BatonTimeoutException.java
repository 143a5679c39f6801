package dev.baton.client;

/**
 * {@link BatonClient#awaitTurn} or {@link BatonClient#awaitResult} ran out of its timeout. For awaitTurn the
 * request was withdrawn first (or, if its turn had just been granted, picked up and aborted).
 */
public class BatonTimeoutException extends BatonException {
    public BatonTimeoutException(String message) {
        super(message);
    }
}
