package dev.baton.client;

/**
 * The worker process of sigkill_mid_handler: runs one request and, inside its handler, prints
 * {@code IN_HANDLER fence=N} and sleeps until the test kills the JVM with SIGKILL.
 * Arguments: lcid requestId leaseMs. BATON_URL and BATON_API_KEY come from the environment.
 */
public final class KillableWorker {
    private KillableWorker() {
    }

    public static void main(String[] args) {
        BatonClient c = BatonClient.builder(System.getenv("BATON_URL")).apiKey(System.getenv("BATON_API_KEY")).build();
        c.run(args[0], work -> {
            System.out.println("IN_HANDLER fence=" + work.fence() + " attempt=" + work.request().attempt());
            System.out.flush();
            Thread.sleep(120_000);
            return null;
        }, RunOptions.of(args[1]).leaseMs(Integer.parseInt(args[2])));
        System.out.println("RETURNED"); // never reached: the test kills the JVM first
    }
}
