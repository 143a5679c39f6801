package dev.baton.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The route templates come from the resources' annotations: every API path maps to one, nothing else does. */
class RoutesTest {

    @Test
    void given_api_paths_then_each_maps_to_its_template_and_methods() {
        assertThat(Routes.API.template("/v1/locks/order-1/heartbeat")).hasValue("/v1/locks/{lcid}/heartbeat");
        assertThat(Routes.API.template("/v1/locks/order-1")).hasValue("/v1/locks/{lcid}");
        assertThat(Routes.API.template("/v1/locks/o/requests/r/retry")).hasValue("/v1/locks/{lcid}/requests/{requestId}/retry");
        assertThat(Routes.API.template("/v1/claims")).hasValue("/v1/claims");
        assertThat(Routes.API.allowed("/v1/locks/o/acquire")).hasValue("POST");
        assertThat(Routes.API.allowed("/v1/locks/o/requests/r")).hasValue("GET, HEAD");
        assertThat(Routes.API.allowed("/v1/busy-locks")).hasValue("GET, HEAD");
    }

    @Test
    void given_other_paths_then_no_template_and_the_metric_label_is_a_fixed_word() {
        assertThat(Routes.API.template("/v1/locks/o/nothing")).isEmpty();
        assertThat(Routes.API.template("/v1/locks")).isEmpty();
        assertThat(Routes.API.template("/fz-1")).isEmpty();
        assertThat(HttpMetricLabels.label("/fz-1", "401")).isEqualTo(HttpMetricLabels.UNMATCHED);
        assertThat(HttpMetricLabels.label("/v1/locks/fz-1/heartbeat", "405")).isEqualTo("/v1/locks/{lcid}/heartbeat");
        assertThat(HttpMetricLabels.label("NOT_FOUND", "404")).isEqualTo("NOT_FOUND");
        assertThat(HttpMetricLabels.label("/console/console.js", "200")).isEqualTo("/console/console.js");
    }
}
