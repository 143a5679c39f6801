package dev.baton.client;

/**
 * A call given up because its caller stopped (the claim poller's stop condition turned true while a claim was
 * in flight or waiting to be retried). Never reaches the application: the poller returns its report instead.
 */
final class Stopped extends BatonException {
    Stopped(String message) {
        super(message);
    }
}
