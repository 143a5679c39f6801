package dev.baton.redis;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.vertx.redis.client.impl.types.ErrorType;

/**
 * A batch (a script and WAIT, with replicas-acked) fails with one error the client composes; it
 * must be read back as what happened: the connection broke (503, retried) or Redis answered an
 * error (NOSCRIPT: send the script again). The messages are the ones the client writes.
 */
class BatchErrorsTest {

    @Test
    void given_a_connection_that_broke_under_a_standalone_batch_then_it_is_unavailable() {
        Throwable failure = ErrorType.create("ERR [2] java.io.IOException: Broken pipe");
        assertThat(SharedConnections.isBatchError(failure)).isTrue();
        assertThat(SharedConnections.unwrapped(failure)).isInstanceOf(BackendUnavailableException.class);
    }

    @Test
    void given_a_connection_that_broke_under_a_cluster_batch_then_it_is_unavailable() {
        // seen when a Cluster primary was killed under load (ClusterFailoverTest)
        Throwable failure = ErrorType.create("ERR [ERR [10] ] java.io.IOException: Broken pipejava.io.IOException: Broken pipe"
                + System.lineSeparator() + "ERR [2] java.io.IOException: Broken pipe");
        assertThat(SharedConnections.isBatchError(failure)).isTrue();
        assertThat(SharedConnections.unwrapped(failure)).isInstanceOf(BackendUnavailableException.class);
    }

    @Test
    void given_a_server_that_forgot_the_script_then_the_batch_error_is_its_noscript_reply() {
        Throwable failure = ErrorType.create("ERR [0] NOSCRIPT No matching script. Please use EVAL.");
        assertThat(SharedConnections.unwrapped(failure)).isInstanceOf(io.vertx.redis.client.Response.class)
                .hasMessageStartingWith("NOSCRIPT");
    }

    @Test
    void given_a_script_error_then_it_stays_an_err_reply() {
        Throwable failure = ErrorType.create("ERR [0] user_script:12: Script attempted to access nonexistent global variable 'x'");
        assertThat(SharedConnections.unwrapped(failure)).isInstanceOf(io.vertx.redis.client.Response.class)
                .hasMessageStartingWith("ERR user_script:12");
    }
}
