package dev.baton.redis;

/** A script stopped with an error of its own (a bug, answered 500), named by helper file and line. */
public class ScriptFailedException extends RuntimeException {

    public ScriptFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
