package dev.baton.client;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Prints one line per test and a closing "N passed, N failed" line: the suite runs under {@code mvnw -q},
 * which hides Surefire's own summary, and a CI log should still show what ran.
 */
public final class PrintingListener implements TestExecutionListener {
    private final AtomicInteger passed = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private final AtomicInteger skipped = new AtomicInteger();
    private final java.util.Map<String, Long> started = new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public void executionStarted(TestIdentifier id) {
        if (id.isTest()) {
            started.put(id.getUniqueId(), System.nanoTime());
        }
    }

    @Override
    public void executionSkipped(TestIdentifier id, String reason) {
        if (id.isTest()) {
            skipped.incrementAndGet();
            System.out.println("SKIP " + id.getDisplayName() + ": " + reason);
        }
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        if (!id.isTest()) {
            if (result.getStatus() == TestExecutionResult.Status.ABORTED) {
                skipped.incrementAndGet(); // an assumption failed in @BeforeAll (no BATON_URL)
                System.out.println("SKIP " + id.getDisplayName() + ": " + result.getThrowable().map(Throwable::getMessage).orElse(""));
            } else if (result.getStatus() == TestExecutionResult.Status.FAILED) {
                failed.incrementAndGet();
                System.out.println("FAIL " + id.getDisplayName() + ": " + result.getThrowable().map(Throwable::toString).orElse(""));
            }
            return;
        }
        Long t0 = started.remove(id.getUniqueId());
        long ms = t0 == null ? 0 : (System.nanoTime() - t0) / 1_000_000;
        String name = id.getLegacyReportingName().replace("()", "");
        if (result.getStatus() == TestExecutionResult.Status.SUCCESSFUL) {
            passed.incrementAndGet();
            System.out.println("PASS " + name + " (" + ms + " ms)");
        } else if (result.getStatus() == TestExecutionResult.Status.ABORTED) {
            skipped.incrementAndGet();
            System.out.println("SKIP " + name + ": " + result.getThrowable().map(Throwable::getMessage).orElse(""));
        } else {
            failed.incrementAndGet();
            System.out.println("FAIL " + name + " (" + ms + " ms): "
                    + result.getThrowable().map(Throwable::toString).orElse(result.getStatus().toString()));
        }
    }

    @Override
    public void testPlanExecutionFinished(TestPlan plan) {
        System.out.println("java: " + passed.get() + " passed, " + failed.get() + " failed, " + skipped.get() + " skipped");
    }
}
