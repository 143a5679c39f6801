package dev.baton.client;

/**
 * No answer: the connection failed, the call timed out, or the calling thread was interrupted
 * ({@link #interrupted()}; the thread's interrupt flag is then set again). Connection errors and timeouts
 * are retried until the deadline; this is the last one.
 */
public class BatonTransportException extends BatonException {
    public BatonTransportException(String message, Throwable cause) {
        super(message, cause);
    }

    /** True when the call stopped because its thread was interrupted. */
    public boolean interrupted() {
        return getCause() instanceof InterruptedException;
    }
}
