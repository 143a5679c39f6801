package dev.baton.testing;

import static io.restassured.RestAssured.given;

import java.util.HashMap;
import java.util.Map;

/** Reads the Prometheus text that /q/metrics serves: one value per series, labels included. */
public final class Metrics {

    private final Map<String, Double> series;

    private Metrics(Map<String, Double> series) {
        this.series = series;
    }

    public static Metrics scrape(String url) {
        String text = given().get(url).then().statusCode(200).extract().asString();
        Map<String, Double> series = new HashMap<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int space = line.lastIndexOf(' ');
            series.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
        }
        return new Metrics(series);
    }

    public double value(String seriesName) {
        return series.getOrDefault(seriesName, 0.0);
    }

    public double delta(Metrics before, String seriesName) {
        return value(seriesName) - before.value(seriesName);
    }

    /** How many series there are whose name (labels included) starts with {@code prefix}. */
    public long count(String prefix) {
        return series.keySet().stream().filter(name -> name.startsWith(prefix)).count();
    }

    /** The series whose name (labels included) starts with {@code prefix}. */
    public java.util.Set<String> names(String prefix) {
        return series.keySet().stream().filter(name -> name.startsWith(prefix))
                .collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new));
    }

    public boolean has(String seriesName) {
        return series.containsKey(seriesName);
    }

    public Iterable<String> names() {
        return series.keySet();
    }
}
