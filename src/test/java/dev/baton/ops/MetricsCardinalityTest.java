package dev.baton.ops;

import static dev.baton.testing.Api.client;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.URL;

import org.junit.jupiter.api.Test;

import dev.baton.testing.AuthEnabledProfile;
import dev.baton.testing.Metrics;
import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * Callers choose paths, not metric series: however many distinct lcids and paths are refused (no
 * key, wrong method, unknown path), the HTTP metrics gain no series after the first few, because every
 * {@code uri} label is a route template or a fixed word.
 */
@QuarkusTest
@TestProfile(AuthEnabledProfile.class)
@WithTestResource(RedisTestResource.class)
class MetricsCardinalityTest {

    static final String HTTP_SERIES = "http_server_requests_seconds_count{";

    @TestHTTPResource(value = "/metrics", management = true)
    URL metricsUrl;

    @Test
    void given_2000_refused_calls_on_distinct_lcids_and_paths_then_the_http_series_do_not_grow() {
        refusedRound("warm-up", 5);
        long before = Metrics.scrape(metricsUrl.toString()).count(HTTP_SERIES);

        refusedRound("storm", 500); // 4 calls each: 2,000

        Metrics after = Metrics.scrape(metricsUrl.toString());
        assertThat(after.count(HTTP_SERIES)).as("series after 2,000 refused calls: %s", after.names(HTTP_SERIES))
                .isEqualTo(before);
        assertThat(after.names(HTTP_SERIES)).noneMatch(name -> name.contains("storm-"));
        assertThat(after.names(HTTP_SERIES)).anyMatch(name -> name.contains("uri=\"/v1/locks/{lcid}/heartbeat\"")
                && name.contains("status=\"401\""));
        assertThat(after.names(HTTP_SERIES)).anyMatch(name -> name.contains("uri=\"/v1/locks/{lcid}/heartbeat\"")
                && name.contains("status=\"405\""));
    }

    /** Per round: no key on a lock call, a wrong method, an unknown path, a wrong key on an unknown path. */
    private static void refusedRound(String prefix, int rounds) {
        for (int i = 0; i < rounds; i++) {
            String lcid = prefix + "-" + i;
            client().body("{\"token\":\"x\"}").post("/v1/locks/{lcid}/heartbeat", lcid).then().statusCode(401);
            client().auth().oauth2(AuthEnabledProfile.KEY_A).get("/v1/locks/{lcid}/heartbeat", lcid).then()
                    .statusCode(405);
            client().auth().oauth2(AuthEnabledProfile.KEY_A).get("/v1/" + lcid + "/nothing").then().statusCode(404);
            client().auth().oauth2("wrong-key").get("/" + lcid).then().statusCode(401);
        }
    }
}
