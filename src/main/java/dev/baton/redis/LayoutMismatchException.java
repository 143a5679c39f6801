package dev.baton.redis;

/** Redis holds Baton data in a layout this release does not read ({@link LayoutVersion}): nothing is served. */
public class LayoutMismatchException extends BackendUnavailableException {
    public LayoutMismatchException(String message) {
        super(message, null);
    }
}
