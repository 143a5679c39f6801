package dev.baton.ops;

import java.util.Set;

import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.config.MeterFilterReply;

/** Filters applied to every meter before it is exported. */
public class MetricsFilters {

    /**
     * The Prometheus text format allows only {@code \\} and {@code \n} escapes in HELP lines, yet
     * some binders' descriptions contain double quotes, which the exporter writes as {@code \"};
     * strict parsers such as {@code promtool check metrics} then reject the whole scrape.
     */
    @Produces
    @Singleton
    MeterFilter plainHelpText() {
        return new MeterFilter() {
            @Override
            public Meter.Id map(Meter.Id id) {
                String description = id.getDescription();
                if (description == null || description.indexOf('"') < 0) {
                    return id;
                }
                return new Meter.Id(id.getName(), io.micrometer.core.instrument.Tags.of(id.getTagsAsIterable()),
                        id.getBaseUnit(), description.replace('"', '\''), id.getType());
            }
        };
    }

    /**
     * Vert.x makes one metrics object per Redis endpoint it connects to, and each registers the
     * client's {@code redis.queue.size} and {@code redis.current} gauges under the same name and
     * tags: only the first is kept, so after a reconnection they report a connection manager that
     * is gone, and the second registration logs a WARN. The client's timers and counters add up
     * correctly and stay.
     */
    @Produces
    @Singleton
    MeterFilter noPerEndpointRedisGauges() {
        Set<String> names = Set.of("redis.queue.size", "redis.current");
        return new MeterFilter() {
            @Override
            public MeterFilterReply accept(Meter.Id id) {
                return id.getType() == Meter.Type.GAUGE && names.contains(id.getName()) ? MeterFilterReply.DENY
                        : MeterFilterReply.NEUTRAL;
            }
        };
    }
}
