package dev.baton.lock;

import static dev.baton.testing.Api.abort;
import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.lock;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.baton.testing.ClaimWorker;
import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * Claim workers split a tenant's orphaned work by kind with {@code lcidPrefix}: a worker that can
 * only do orders is never handed an invoice. Names carry a tag of their own, since other test
 * classes leave orphans in the same tenant.
 */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class ClaimsByPrefixScenariosTest {

    @Test
    void given_an_orphaned_order_and_an_orphaned_invoice_when_an_order_worker_polls_claims_then_it_gets_the_order_and_never_the_invoice() {
        String tag = unique("kinds");
        String order = tag + "-order-1";
        String invoice = tag + "-invoice-7";
        orphan(order, "pay");
        orphan(invoice, "bill");

        List<String> orderWorker = ClaimWorker.pollWithPrefix(tag + "-order-", Duration.ofSeconds(1));

        assertThat(orderWorker).containsExactly(order + "/pay#1");
        assertThat(lock(invoice).getBoolean("held")).isFalse();
        assertThat(lock(invoice).getInt("queueLength")).isEqualTo(1);

        List<String> invoiceWorker = ClaimWorker.pollWithPrefix(tag + "-invoice-", Duration.ofSeconds(1));

        assertThat(invoiceWorker).containsExactly(invoice + "/bill#1");
        assertThat(lock(invoice).getInt("queueLength")).isZero();
    }

    @Test
    void given_orphans_of_another_kind_only_when_a_prefixed_worker_claims_then_204_and_the_orphans_stay_for_their_own_workers()
            throws InterruptedException {
        String tag = unique("other");
        String invoice = tag + "-invoice-1";
        orphan(invoice, "bill");
        Thread.sleep(100); // past the hint batch: the invoice is in the claim index

        client().body(fields("lcidPrefix", tag + "-order-")).post("/v1/claims").then().statusCode(204);

        assertThat(lock(invoice).getInt("queueLength")).isEqualTo(1);
        assertThat(ClaimWorker.pollWithPrefix(tag + "-", Duration.ofSeconds(1))).containsExactly(invoice + "/bill#1");
    }

    @Test
    void given_a_live_holder_with_work_waiting_when_a_worker_claims_its_prefix_then_it_is_never_handed_out() {
        String lcid = unique("live") + "-order-1";
        String token = acquire(lcid, fields("requestId", "busy", "leaseMs", 30000)).then().statusCode(200)
                .extract().path("token");
        acquire(lcid, "behind").then().statusCode(202);

        assertThat(ClaimWorker.pollWithPrefix(lcid, Duration.ofMillis(500))).isEmpty();

        complete(lcid, token, "busy").then().body("request.requestId", equalTo("behind"));
    }

    static Stream<Arguments> badPrefixes() {
        return Stream.of(Arguments.of("\"\""), Arguments.of("\"has space\""), Arguments.of("\"a/b\""),
                Arguments.of("\"" + "p".repeat(201) + "\""), Arguments.of("7"), Arguments.of("[\"order-\"]"));
    }

    @ParameterizedTest(name = "lcidPrefix {0} -> 400")
    @MethodSource("badPrefixes")
    void given_a_bad_prefix_when_claiming_then_400_naming_lcidPrefix(String prefix) {
        client().body("{\"lcidPrefix\":" + prefix + "}").post("/v1/claims").then().statusCode(400)
                .contentType("application/problem+json")
                .body("code", equalTo("INVALID_REQUEST"))
                .body("field", equalTo("lcidPrefix"));
    }

    /** A holder that aborted with one request waiting: the lcid is claimable at once. */
    private static void orphan(String lcid, String waiting) {
        String token = acquire(lcid, "first").then().statusCode(200).extract().path("token");
        acquire(lcid, waiting).then().statusCode(202);
        abort(lcid, fields("requestId", "first", "token", token)).then().statusCode(200).body("pending", equalTo(1));
    }
}
