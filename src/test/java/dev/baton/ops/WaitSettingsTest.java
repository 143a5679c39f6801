package dev.baton.ops;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

import dev.baton.config.BatonConfig;

/** The service refuses to start with a pick-up window shorter than three re-checks. */
class WaitSettingsTest {

    private static BatonConfig.Wait settings(long pickupMs, long recheckMs) {
        return new BatonConfig.Wait() {
            @Override
            public long pickupMs() {
                return pickupMs;
            }

            @Override
            public long recheckMs() {
                return recheckMs;
            }

            @Override
            public int maxWaiters() {
                return 10_000;
            }
        };
    }

    @Test
    void given_a_pickup_window_of_three_rechecks_or_more_then_accepted() {
        assertThatCode(() -> StartupChecks.checkWait(settings(5000, 1000))).doesNotThrowAnyException();
        assertThatCode(() -> StartupChecks.checkWait(settings(3000, 1000))).doesNotThrowAnyException();
    }

    @Test
    void given_a_pickup_window_under_three_rechecks_then_refused_naming_both_settings() {
        assertThatThrownBy(() -> StartupChecks.checkWait(settings(2999, 1000)))
                .hasMessageContaining("baton.wait.pickup-ms").hasMessageContaining("baton.wait.recheck-ms");
        assertThatThrownBy(() -> StartupChecks.checkWait(settings(5000, 0))).isInstanceOf(IllegalStateException.class);
    }
}
