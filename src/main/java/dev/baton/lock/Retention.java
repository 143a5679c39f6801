package dev.baton.lock;

/** The retention settings as the scripts take them: milliseconds, as text. */
final class Retention {

    private Retention() {
    }

    static String result(BatonConfig config) {
        return Long.toString(config.resultRetention().toMillis());
    }

    /** The scripts keep an idle lcid at least until its last kept record is due (lua/lib.lua touch). */
    static String idle(BatonConfig config) {
        return Long.toString(config.idleRetention().toMillis());
    }

    static String dead(BatonConfig config) {
        return Long.toString(config.deadRetention().toMillis());
    }
}
