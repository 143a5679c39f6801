package dev.baton.failover;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;

import org.junit.jupiter.api.Test;

import dev.baton.testing.FailoverDrill;
import dev.baton.testing.SentinelGroupResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * The same Sentinel failover with the default replicas-acked=0: answers do not wait for the
 * replica, so a write the primary took with it may be lost. The number is measured, not asserted:
 * it is the figure in docs/guarantees-and-failover.md.
 */
@QuarkusTest
@WithTestResource(SentinelGroupResource.class)
class SentinelFailoverUnackedTest {

    @TestHTTPResource("/")
    URI base;

    @TestHTTPResource(value = "/health/ready", management = true)
    URI ready;

    @Test
    void given_replicas_acked_0_when_the_primary_is_killed_under_load_then_the_service_heals_and_losses_are_counted()
            throws Exception {
        FailoverDrill.Result result = FailoverDrill.run(base, ready, "sentinel-unacked", SentinelGroupResource::primary,
                SentinelGroupResource::failOver, SentinelGroupResource::restart);

        assertThat(result.report().unavailableAnswers()).as("the failover was felt").isPositive();
        assertThat(result.report().healedAfterMs()).as("served again after the failover").isPositive();
        assertThat(result.notReadyFromMs()).as("readiness went DOWN while the primary was gone").isBetween(0L, 5000L);
        assertThat(result.report().fenceViolations()).as("grants whose fence did not rise").isZero();
        given().get(ready).then().statusCode(200);
    }
}
