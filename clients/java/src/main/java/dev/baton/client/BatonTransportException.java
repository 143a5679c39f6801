package dev.baton.client;

/**
 * No answer: the connection failed, the call timed out, or the calling thread was interrupted
 * ({@link #interrupted()}; the thread's interrupt flag is then set again). Connection errors and timeouts
 * are retried until the deadline; this is the last one. The message names the service's host and port
 * ({@code connection refused: 127.0.0.1:8081 (GET /v1/locks/L)}), so that a wrong URL shows at once.
 */
public class BatonTransportException extends BatonException {
    private final String host;
    private final int port;

    public BatonTransportException(String message, Throwable cause) {
        this(message, cause, null, -1);
    }

    public BatonTransportException(String message, Throwable cause, String host, int port) {
        super(message, cause);
        this.host = host;
        this.port = port;
    }

    /** True when the call stopped because its thread was interrupted. */
    public boolean interrupted() {
        return getCause() instanceof InterruptedException;
    }

    /** True when the attempt got no answer within its timeout. */
    boolean timedOut() {
        return getCause() instanceof java.net.http.HttpTimeoutException;
    }

    /** The host the client could not reach, or null when not known. */
    public String host() {
        return host;
    }

    /** The port the client could not reach, or -1 when not known. */
    public int port() {
        return port;
    }
}
