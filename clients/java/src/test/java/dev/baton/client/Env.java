package dev.baton.client;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.fail;

/** What clients/conformance/harness exported, and helpers around it. */
final class Env {
    static final String URL = System.getenv("BATON_URL");
    static final String API_KEY = System.getenv("BATON_API_KEY");
    static final String ADMIN_KEY = System.getenv("BATON_ADMIN_KEY");
    static final String HARNESS = System.getenv("BATON_HARNESS");
    static final String HARNESS_DIR = System.getenv("BATON_HARNESS_DIR");
    /** A random prefix per test run: scenarios never see each other's (or an earlier run's) locks. */
    static final String RUN = "jv" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffL);

    private Env() {
    }

    static boolean present() {
        return URL != null && !URL.isEmpty();
    }

    /**
     * Runs {@code harness CMD DIR [SECONDS]} in the background; the future completes with its exit code once
     * the disruption is over (the harness blocks until Redis or the service answers again).
     */
    static CompletableFuture<Integer> harness(String cmd, String... args) {
        String[] argv = new String[2 + 1 + args.length];
        argv[0] = HARNESS;
        argv[1] = cmd;
        argv[2] = HARNESS_DIR;
        System.arraycopy(args, 0, argv, 3, args.length);
        try {
            Process p = new ProcessBuilder(argv).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.INHERIT).start();
            return p.onExit().thenApply(Process::exitValue);
        } catch (IOException e) {
            throw new IllegalStateException("cannot run the harness", e);
        }
    }

    /** Polls {@code cond} every 50 ms until it holds, failing after {@code max}. */
    static void await(String what, Duration max, BooleanSupplier cond) throws InterruptedException {
        long end = System.nanoTime() + max.toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) {
                fail("timed out after " + max + " waiting for: " + what);
            }
            Thread.sleep(50);
        }
    }
}
