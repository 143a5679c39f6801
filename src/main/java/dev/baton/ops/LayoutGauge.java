package dev.baton.ops;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import org.jboss.logging.Logger;

import dev.baton.redis.LayoutVersion;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;

/**
 * baton_layout_refused: 1 while this replica refuses to serve because Redis holds another layout
 * ({@link LayoutVersion}), for an alert that names the cause, not only "pods unready". The first
 * check runs at startup, so a replica started on the wrong Redis says so before any call comes.
 */
@ApplicationScoped
class LayoutGauge {

    private static final Logger LOG = Logger.getLogger(LayoutGauge.class);

    private Gauge gauge;
    private MeterRegistry registry;

    void register(@Observes StartupEvent started, LayoutVersion layout, MeterRegistry registry) {
        this.registry = registry;
        gauge = Gauge.builder("baton.layout.refused", layout, l -> l.refusal() == null ? 0 : 1)
                .description("1 while Redis holds Baton data in a layout this release does not read (the replica "
                        + "is unready and writes nothing), else 0")
                .strongReference(true).register(registry);
        layout.check().subscribe().with(ok -> {
        }, failure -> LOG.debugf("layout check at startup: %s", failure.getMessage()));
    }

    /**
     * A registry can outlive the application (the tests start several in one JVM): a gauge left
     * behind would read this stopped application's beans, and hide the next one's.
     */
    void unregister(@Observes ShutdownEvent stopped) {
        if (gauge != null) {
            registry.remove(gauge);
        }
    }
}
