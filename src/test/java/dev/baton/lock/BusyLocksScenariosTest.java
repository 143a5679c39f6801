package dev.baton.lock;

import static dev.baton.testing.Api.client;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import dev.baton.redis.IndexKeys;
import dev.baton.testing.OperatorProfile;
import dev.baton.testing.RedisTestResource;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;

/**
 * Operators list a tenant's busy lcids (GET /v1/busy-locks): longest held first, or longest queue
 * first, each as its lock view read now. The list comes from the busy index, which the scripts'
 * hints keep after each change (written within the hint-batch window), so scenarios wait for it.
 */
@QuarkusTest
@TestProfile(OperatorProfile.class)
@WithTestResource(RedisTestResource.class)
class BusyLocksScenariosTest {

    private static final String TENANT = "ops";

    @Inject
    RedisDataSource redis;

    private static RequestSpecification admin() {
        return client().auth().oauth2(OperatorProfile.ADMIN_KEY);
    }

    private static String acquire(String lcid, String requestId) {
        return admin().body(fields("requestId", requestId)).post("/v1/locks/{lcid}/acquire", lcid).then()
                .extract().path("token");
    }

    private static JsonPath complete(String lcid, String token, String requestId) {
        return admin().body(fields("token", token, "requestId", requestId)).post("/v1/locks/{lcid}/complete", lcid)
                .then().statusCode(200).extract().jsonPath();
    }

    private static JsonPath list(Object... query) {
        RequestSpecification request = admin();
        for (int i = 0; i < query.length; i += 2) {
            request = request.queryParam((String) query[i], query[i + 1]);
        }
        return request.get("/v1/busy-locks").then().statusCode(200).extract().jsonPath();
    }

    /** The listed items of these lcids, in list order, once the list satisfies {@code until} (hints land within ms). */
    private static List<Map<String, Object>> itemsOf(List<String> lcids, Predicate<List<Map<String, Object>>> until,
            Object... query) throws InterruptedException {
        List<Map<String, Object>> mine = List.of();
        for (int i = 0; i < 100; i++) {
            List<Map<String, Object>> items = list(query).getList("items");
            mine = items.stream().filter(item -> lcids.contains(item.get("lcid"))).toList();
            if (until.test(mine)) {
                return mine;
            }
            Thread.sleep(30);
        }
        return mine;
    }

    private static List<Object> lcidsOf(List<Map<String, Object>> items) {
        return items.stream().map(item -> item.get("lcid")).toList();
    }

    @Test
    void given_three_held_lcids_and_an_idle_one_when_listed_then_longest_held_first_and_no_idle_one()
            throws InterruptedException {
        String first = unique("order"), second = unique("order"), third = unique("order"), idle = unique("order");
        acquire(first, "a");
        Thread.sleep(40);
        acquire(second, "b");
        acquire(second, "b2");
        Thread.sleep(40);
        acquire(third, "c");
        complete(idle, acquire(idle, "d"), "d");

        List<Map<String, Object>> items = itemsOf(List.of(first, second, third, idle), mine -> mine.size() == 3);

        assertThat(lcidsOf(items)).containsExactly(first, second, third);
        assertThat(items).allSatisfy(item -> assertThat(item).containsEntry("held", true));
        assertThat(items.get(1)).containsEntry("activeRequestId", "b").containsEntry("queueLength", 1);
        long oldest = ((Number) items.get(0).get("heldForMs")).longValue();
        long newest = ((Number) items.get(2).get("heldForMs")).longValue();
        assertThat(oldest).isGreaterThanOrEqualTo(newest + 60);
    }

    @Test
    void given_queues_of_different_lengths_when_listed_by_queue_then_longest_queue_first() throws InterruptedException {
        String one = unique("order"), three = unique("order"), none = unique("order");
        acquire(one, "h");
        acquire(one, "q1");
        acquire(three, "h");
        for (int i = 1; i <= 3; i++) {
            acquire(three, "q" + i);
        }
        acquire(none, "h");

        List<Map<String, Object>> items = itemsOf(List.of(one, three, none), mine -> mine.size() == 3, "order", "queue",
                "limit", 100);

        assertThat(lcidsOf(items)).containsExactly(three, one, none);
        assertThat(items).extracting(item -> item.get("queueLength")).containsExactly(3, 1, 0);
        JsonPath page = list("order", "queue");
        assertThat(page.getString("order")).isEqualTo("queue");
        assertThat(page.getInt("rankedAmong")).isGreaterThanOrEqualTo(3);
    }

    @Test
    void given_a_holder_that_hands_off_when_listed_then_it_keeps_its_holder_age() throws InterruptedException {
        String lcid = unique("order");
        String token = acquire(lcid, "a");
        acquire(lcid, "b");
        Thread.sleep(150);

        JsonPath next = complete(lcid, token, "a");
        assertThat(next.getString("status")).isEqualTo("NEXT");
        List<Map<String, Object>> items = itemsOf(List.of(lcid), mine -> mine.size() == 1
                && "b".equals(mine.get(0).get("activeRequestId")));

        assertThat(items).hasSize(1);
        assertThat(((Number) items.get(0).get("heldForMs")).longValue()).isGreaterThanOrEqualTo(150);
        assertThat(admin().get("/v1/locks/{lcid}", lcid).then().extract().jsonPath().getLong("heldForMs"))
                .isGreaterThanOrEqualTo(150);
    }

    @Test
    void given_a_busy_lcid_when_it_turns_idle_then_it_leaves_the_list_and_the_index() throws InterruptedException {
        String lcid = unique("order");
        String token = acquire(lcid, "a");
        assertThat(itemsOf(List.of(lcid), mine -> mine.size() == 1)).hasSize(1);

        complete(lcid, token, "a");

        assertThat(itemsOf(List.of(lcid), List::isEmpty)).isEmpty();
        assertThat(redis.sortedSet(String.class).zscore(IndexKeys.busy(TENANT), lcid)).isEmpty();
        assertThat(redis.hash(String.class).hget(IndexKeys.busyVersions(TENANT), lcid)).isNull();
    }

    @Test
    void given_a_holder_that_gave_up_with_work_waiting_when_listed_then_the_lcid_is_there_without_a_holder()
            throws InterruptedException {
        String lcid = unique("order");
        String token = acquire(lcid, "a");
        acquire(lcid, "b");
        admin().body(fields("requestId", "a", "token", token)).post("/v1/locks/{lcid}/abort", lcid).then()
                .statusCode(200).body("pending", equalTo(1));

        List<Map<String, Object>> items = itemsOf(List.of(lcid), mine -> mine.size() == 1
                && Boolean.FALSE.equals(mine.get(0).get("held")));

        assertThat(items).hasSize(1);
        assertThat(items.get(0)).containsEntry("held", false).containsEntry("queueLength", 1)
                .doesNotContainKey("heldForMs");
    }

    @Test
    void given_an_index_entry_for_an_idle_lcid_when_listed_then_it_is_not_shown_and_leaves_the_index() {
        String lcid = unique("order");
        redis.sortedSet(String.class).zadd(IndexKeys.busy(TENANT), 1.0, lcid);

        List<Object> listed = list("limit", 100).getList("items.lcid");

        assertThat(listed).doesNotContain(lcid);
        assertThat(redis.sortedSet(String.class).zscore(IndexKeys.busy(TENANT), lcid)).isEmpty();
    }

    @Test
    void given_a_page_when_offset_and_limit_then_that_slice_of_the_held_order() throws InterruptedException {
        String a = unique("order"), b = unique("order"), c = unique("order");
        acquire(a, "x");
        Thread.sleep(5);
        acquire(b, "x");
        Thread.sleep(5);
        acquire(c, "x");
        List<Map<String, Object>> all = itemsOf(List.of(a, b, c), mine -> mine.size() == 3, "limit", 100);
        List<Object> order = list("limit", 100).getList("items.lcid");
        int at = order.indexOf(a);

        JsonPath page = list("offset", at + 1, "limit", 2);

        assertThat(lcidsOf(all)).containsExactly(a, b, c);
        assertThat(page.getList("items.lcid")).containsExactly(b, c);
        assertThat(page.getInt("offset")).isEqualTo(at + 1);
        assertThat(page.getLong("busyCount")).isGreaterThanOrEqualTo(3);
    }

    @Test
    void given_bad_parameters_then_400_naming_them_and_a_worker_key_is_refused() {
        Object[][] cases = { { "order", "age" }, { "offset", -1 }, { "limit", 0 }, { "limit", 101 } };
        for (Object[] bad : cases) {
            admin().queryParam((String) bad[0], bad[1]).get("/v1/busy-locks").then().statusCode(400)
                    .contentType("application/problem+json").body("field", equalTo(bad[0]));
        }
        client().auth().oauth2(OperatorProfile.WORKER_KEY).get("/v1/busy-locks").then().statusCode(403)
                .contentType("application/problem+json").body("code", equalTo("FORBIDDEN"));
        client().get("/v1/busy-locks").then().statusCode(401);
    }
}
