package dev.baton.security;

import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import org.junit.jupiter.api.Test;

import dev.baton.testing.AccessLogProfile;
import dev.baton.testing.LogCapture;
import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * Dev mode has the HTTP access log on, which reads the caller's principal on every call: the
 * identity of a call with authentication off must have one (a fresh-clone CI run of dev mode logged
 * a NullPointerException from the access log for a call that sent a key).
 */
@QuarkusTest
@TestProfile(AccessLogProfile.class)
@WithTestResource(RedisTestResource.class)
class AuthOffAccessLogTest {

    @Test
    void given_auth_off_and_the_access_log_on_when_a_key_is_sent_then_the_call_is_logged_without_an_error() throws Exception {
        LogCapture log = LogCapture.start();
        try {
            client().header("Authorization", "Bearer my-worker-key").body(fields("requestId", "a"))
                    .post("/v1/locks/{lcid}/acquire", unique("order")).then()
                    .statusCode(200).body("status", equalTo("ACQUIRED"));
            Thread.sleep(200); // the access log line is written when the answer has ended
        } finally {
            log.stop();
        }
        assertThat(log.lines()).noneMatch(line -> line.contains("NullPointerException") || line.contains("SEVERE"));
        assertThat(log.lines()).anyMatch(line -> line.contains("/v1/locks/"));
    }
}
