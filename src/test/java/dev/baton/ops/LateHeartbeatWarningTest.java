package dev.baton.ops;

import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.URL;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.baton.testing.LeaseWarningProfile;
import dev.baton.testing.Metrics;
import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.specification.RequestSpecification;

/**
 * Holders that heartbeat too late for their lease lose it to the first Redis stall. Only the
 * service sees it happen, so it says so: one WARN per tenant, and a counter for every one.
 */
@QuarkusTest
@TestProfile(LeaseWarningProfile.class)
@WithTestResource(RedisTestResource.class)
class LateHeartbeatWarningTest {

    private static final String SERIES = "baton_late_heartbeats_total";

    @TestHTTPResource(value = "/metrics", management = true)
    URL metricsUrl;

    private final List<LogRecord> warnings = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
                warnings.add(record);
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void captureWarnings() {
        Logger.getLogger("").addHandler(capture);
    }

    @AfterEach
    void stopCapturing() {
        Logger.getLogger("").removeHandler(capture);
    }

    @Test
    void given_holders_that_renew_after_half_their_lease_then_one_warning_per_tenant_and_every_one_counted()
            throws InterruptedException {
        Metrics before = Metrics.scrape(metricsUrl.toString());
        String lcidA = unique("late");
        String lcidB = unique("late");
        String tokenA = grant(as(LeaseWarningProfile.KEY_A), lcidA);
        String tokenB = grant(as(LeaseWarningProfile.KEY_B), lcidB);

        heartbeat(as(LeaseWarningProfile.KEY_A), lcidA, tokenA); // well within the first half: fine
        assertThat(lateWarnings()).isEmpty();

        Thread.sleep(1_700); // past half of the 3 s lease, well before its end
        heartbeat(as(LeaseWarningProfile.KEY_A), lcidA, tokenA);
        heartbeat(as(LeaseWarningProfile.KEY_B), lcidB, tokenB);
        Thread.sleep(1_700);
        heartbeat(as(LeaseWarningProfile.KEY_A), lcidA, tokenA);

        List<String> said = lateWarnings();
        assertThat(said).hasSize(2);
        assertThat(said.get(0)).contains("Tenant lease-a").contains("of 3000 ms").contains("lease/3");
        assertThat(said.get(1)).contains("Tenant lease-b");
        assertThat(String.join("\n", said)).doesNotContain(tokenA).doesNotContain(tokenB);
        assertThat(Metrics.scrape(metricsUrl.toString()).delta(before, SERIES)).isEqualTo(3.0);
    }

    private List<String> lateWarnings() {
        return warnings.stream().map(record -> record instanceof org.jboss.logmanager.ExtLogRecord ext
                ? ext.getFormattedMessage() : record.getMessage())
                .filter(text -> text.contains("renews leases late")).toList();
    }

    private static RequestSpecification as(String key) {
        return client().auth().oauth2(key);
    }

    private static String grant(RequestSpecification caller, String lcid) {
        return caller.body(fields("requestId", "r", "leaseMs", 3000)).post("/v1/locks/{lcid}/acquire", lcid).then()
                .statusCode(200).extract().path("token");
    }

    private static void heartbeat(RequestSpecification caller, String lcid, String token) {
        caller.body(fields("token", token)).post("/v1/locks/{lcid}/heartbeat", lcid).then().statusCode(200);
    }
}
