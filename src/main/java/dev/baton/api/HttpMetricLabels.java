package dev.baton.api;

import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.config.MeterFilter;

/**
 * The {@code uri} label of the HTTP server metrics is a route template or a fixed word, never a path
 * a caller chose. Quarkus labels a call the REST layer matched with its template, but a call refused
 * before matching (401 from authentication, 405, 413, 431) with its raw path: without this filter an
 * unauthenticated caller makes one new series per lcid, without bound, in Baton's memory and in every
 * Prometheus that scrapes it.
 */
public class HttpMetricLabels {

    static final String METER = "http.server.requests";
    /** The label of a call whose path is none of the API's and that was not served (4xx, 5xx). */
    static final String UNMATCHED = "UNMATCHED";

    @Produces
    @Singleton
    MeterFilter templatedUris() {
        return new MeterFilter() {
            @Override
            public Meter.Id map(Meter.Id id) {
                if (!METER.equals(id.getName())) {
                    return id;
                }
                String uri = id.getTag("uri");
                String label = label(uri, id.getTag("status"));
                return label.equals(uri) ? id : id.replaceTags(replaced(id, label));
            }
        };
    }

    /**
     * A template or a word ({@code NOT_FOUND}) stays; an API path becomes its template; any other path
     * stays only when it was served (a console file: a fixed set), else it is {@link #UNMATCHED}.
     */
    static String label(String uri, String status) {
        if (uri == null || !uri.startsWith("/") || uri.indexOf('{') >= 0) {
            return uri;
        }
        return Routes.API.template(uri).orElseGet(() -> served(status) ? uri : UNMATCHED);
    }

    private static boolean served(String status) {
        return status != null && (status.startsWith("2") || status.startsWith("3"));
    }

    private static Tags replaced(Meter.Id id, String label) {
        Tags tags = Tags.empty();
        for (Tag tag : id.getTagsAsIterable()) {
            tags = tags.and("uri".equals(tag.getKey()) ? Tag.of("uri", label) : tag);
        }
        return tags;
    }
}
