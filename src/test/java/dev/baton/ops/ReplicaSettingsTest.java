package dev.baton.ops;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.baton.config.BatonConfig;

/** The service refuses to start when replicas-acked cannot work: a negative count, or a WAIT the backend timeout would cut off. */
class ReplicaSettingsTest {

    private static BatonConfig.Backend settings(int replicasAcked, long replicasTimeoutMs) {
        return new BatonConfig.Backend() {
            @Override
            public Duration timeout() {
                return Duration.ofMillis(1500);
            }

            @Override
            public int retryAfterSeconds() {
                return 1;
            }

            @Override
            public int connections() {
                return 2;
            }

            @Override
            public int replicasAcked() {
                return replicasAcked;
            }

            @Override
            public Duration replicasTimeout() {
                return Duration.ofMillis(replicasTimeoutMs);
            }
        };
    }

    @Test
    void given_no_replicas_or_a_wait_shorter_than_the_backend_timeout_then_accepted() {
        assertThatCode(() -> StartupChecks.checkReplicas(settings(0, 500))).doesNotThrowAnyException();
        assertThatCode(() -> StartupChecks.checkReplicas(settings(1, 500))).doesNotThrowAnyException();
        assertThatCode(() -> StartupChecks.checkReplicas(settings(2, 1499))).doesNotThrowAnyException();
    }

    @Test
    void given_a_negative_count_or_a_wait_as_long_as_the_backend_timeout_then_refused_naming_the_setting() {
        assertThatThrownBy(() -> StartupChecks.checkReplicas(settings(-1, 500)))
                .hasMessageContaining("baton.backend.replicas-acked");
        assertThatThrownBy(() -> StartupChecks.checkReplicas(settings(1, 1500)))
                .hasMessageContaining("baton.backend.replicas-timeout").hasMessageContaining("baton.backend.timeout");
        assertThatThrownBy(() -> StartupChecks.checkReplicas(settings(1, 0)))
                .hasMessageContaining("baton.backend.replicas-timeout");
    }
}
