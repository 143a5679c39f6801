package dev.baton.lock;

import static dev.baton.testing.Api.abort;
import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

/** Operators read an lcid's queue in order, a page at a time (GET /v1/locks/{lcid}/queue). */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class QueueViewScenariosTest {

    private static JsonPath queue(String lcid, Object... query) {
        var request = client();
        for (int i = 0; i < query.length; i += 2) {
            request = request.queryParam((String) query[i], query[i + 1]);
        }
        return request.get("/v1/locks/{lcid}/queue", lcid).then().statusCode(200).extract().jsonPath();
    }

    @Test
    void given_a_holder_and_three_queued_requests_when_listed_then_they_come_in_arrival_order_without_payloads() {
        String lcid = unique("order");
        acquire(lcid, "holder").then().statusCode(200);
        acquire(lcid, fields("requestId", "pay", "payload", Map.of("amount", 42))).then().statusCode(202);
        acquire(lcid, fields("requestId", "ship", "mode", "wait")).then().statusCode(202);
        acquire(lcid, "cancel").then().statusCode(202);

        JsonPath page = queue(lcid);

        assertThat(page.getString("lcid")).isEqualTo(lcid);
        assertThat(page.getInt("queueLength")).isEqualTo(3);
        assertThat(page.getInt("offset")).isZero();
        assertThat(page.getList("items.requestId")).containsExactly("pay", "ship", "cancel");
        assertThat(page.getList("items.position")).containsExactly(1, 2, 3);
        assertThat(page.getList("items.state")).containsOnly("QUEUED");
        assertThat(page.getList("items.attempt")).containsOnly(1);
        assertThat(page.getList("items.mode")).containsExactly("handoff", "wait", "handoff");
        assertThat(page.getList("items.queuedForMs", Integer.class)).allSatisfy(age -> assertThat(age).isBetween(0, 60_000));
        assertThat(page.getList("items.payload")).containsOnlyNulls();
    }

    @Test
    void given_payload_true_when_listed_then_each_payload_comes_as_the_json_it_was_sent_as() {
        String lcid = unique("order");
        acquire(lcid, "holder").then().statusCode(200);
        acquire(lcid, fields("requestId", "pay", "payload", Map.of("amount", 42))).then().statusCode(202);
        acquire(lcid, fields("requestId", "note", "payload", "<script>alert(1)</script>")).then().statusCode(202);
        acquire(lcid, "bare").then().statusCode(202);

        List<Map<String, Object>> items = queue(lcid, "payload", "true").getList("items");

        assertThat(items.get(0).get("payload")).isEqualTo(Map.of("amount", 42));
        assertThat(items.get(1).get("payload")).isEqualTo("<script>alert(1)</script>");
        assertThat(items.get(2)).doesNotContainKey("payload");
    }

    @Test
    void given_five_queued_when_paged_then_each_page_has_its_positions_and_the_whole_length() {
        String lcid = unique("order");
        acquire(lcid, "holder").then().statusCode(200);
        for (int i = 1; i <= 5; i++) {
            acquire(lcid, "r" + i).then().statusCode(202);
        }

        JsonPath middle = queue(lcid, "offset", 2, "limit", 2);
        JsonPath past = queue(lcid, "offset", 5);

        assertThat(middle.getList("items.requestId")).containsExactly("r3", "r4");
        assertThat(middle.getList("items.position")).containsExactly(3, 4);
        assertThat(middle.getInt("queueLength")).isEqualTo(5);
        assertThat(middle.getInt("offset")).isEqualTo(2);
        assertThat(past.getList("items")).isEmpty();
        assertThat(past.getInt("queueLength")).isEqualTo(5);
    }

    @Test
    void given_a_holder_that_gave_its_request_back_when_listed_then_it_heads_the_queue_at_attempt_2_with_the_reason() {
        String lcid = unique("order");
        String token = acquire(lcid, "pay").then().statusCode(200).extract().path("token");
        acquire(lcid, "ship").then().statusCode(202);
        abort(lcid, fields("requestId", "pay", "token", token, "requeue", true, "reason", "bank timeout"))
                .then().statusCode(200);

        List<Map<String, Object>> items = queue(lcid).getList("items");

        assertThat(items).extracting(item -> item.get("requestId")).containsExactly("pay", "ship");
        assertThat(items.get(0)).containsEntry("attempt", 2).containsEntry("reason", "bank timeout");
        assertThat(items.get(1)).containsEntry("attempt", 1).doesNotContainKey("reason");
    }

    @Test
    void given_an_lcid_nobody_used_when_listed_then_an_empty_page() {
        JsonPath page = queue(unique("order"));

        assertThat(page.getInt("queueLength")).isZero();
        assertThat(page.getList("items")).isEmpty();
    }

    @Test
    void given_a_bad_offset_limit_or_payload_flag_then_400_naming_it() {
        String lcid = unique("order");
        Object[][] cases = { { "offset", -1 }, { "offset", "x" }, { "limit", 0 }, { "limit", 101 }, { "limit", 1.5 },
                { "payload", "yes" } };
        for (Object[] bad : cases) {
            client().queryParam((String) bad[0], bad[1]).get("/v1/locks/{lcid}/queue", lcid).then().statusCode(400)
                    .contentType("application/problem+json").body("field", equalTo(bad[0]))
                    .body("detail", containsString((String) bad[0]));
        }
        client().get("/v1/locks/{lcid}/queue", "bad lcid").then().statusCode(400).body("field", equalTo("lcid"));
    }
}
