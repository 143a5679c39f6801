package dev.baton.ops;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import dev.baton.lock.LongPolls;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.StartupEvent;

/**
 * The open long-polls of this replica as a gauge. Apart from {@link LockMetrics}, which the
 * long-polls report to: registering it there would make the two beans need each other.
 */
@ApplicationScoped
class LongPollGauge {

    void register(@Observes StartupEvent started, LongPolls polls, MeterRegistry registry) {
        Gauge.builder("baton.longpolls.open", polls, LongPolls::open)
                .description("Long-polls (acquire or request view with waitMs) this replica holds open now")
                .strongReference(true).register(registry);
    }
}
