package dev.baton.failover;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;

import org.junit.jupiter.api.Test;

import dev.baton.testing.FailoverDrill;
import dev.baton.testing.ReplicasAckedProfile;
import dev.baton.testing.SentinelGroupResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * Sentinel failover under load with durable acknowledgements (replicas-acked=1): the service
 * follows the sentinels to the new primary by itself and nothing it acknowledged is lost.
 */
@QuarkusTest
@WithTestResource(SentinelGroupResource.class)
@TestProfile(ReplicasAckedProfile.class)
class SentinelFailoverTest {

    @TestHTTPResource("/")
    URI base;

    @TestHTTPResource(value = "/health/ready", management = true)
    URI ready;

    @Test
    void given_replicas_acked_1_when_the_primary_is_killed_under_load_then_no_acknowledged_request_is_lost()
            throws Exception {
        FailoverDrill.Result result = FailoverDrill.run(base, ready, "sentinel-acked", SentinelGroupResource::primary,
                SentinelGroupResource::failOver, SentinelGroupResource::restart);

        assertThat(result.report().unavailableAnswers()).as("the failover was felt").isPositive();
        assertThat(result.report().lost()).as("acknowledged requests lost").isZero();
        assertThat(result.report().notProcessed()).as("acknowledged requests never processed").isZero();
        assertThat(result.report().fenceViolations()).as("grants whose fence did not rise").isZero();
        assertThat(result.report().healedAfterMs()).as("served again after the failover").isPositive();
        assertThat(result.notReadyFromMs()).as("readiness went DOWN while the primary was gone").isBetween(0L, 5000L);
        given().get(ready).then().statusCode(200);
    }
}
