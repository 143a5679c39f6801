package dev.baton.lock;

import dev.baton.config.BatonConfig;

/** The retention settings as the scripts take them: milliseconds. */
final class Retention {

    private Retention() {
    }

    static long result(BatonConfig config) {
        return config.resultRetention().toMillis();
    }

    /** The scripts keep an idle lcid at least until its last kept record is due (lua/includes/expiry.lua). */
    static long idle(BatonConfig config) {
        return config.idleRetention().toMillis();
    }

    static long dead(BatonConfig config) {
        return config.deadRetention().toMillis();
    }
}
