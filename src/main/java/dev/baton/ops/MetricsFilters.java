package dev.baton.ops;

import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;

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
}
