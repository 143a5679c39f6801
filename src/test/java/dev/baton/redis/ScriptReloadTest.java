package dev.baton.redis;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import dev.baton.testing.RedisTestResource;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;

@QuarkusTest
@WithTestResource(RedisTestResource.class)
class ScriptReloadTest {

    @Inject
    RedisDataSource redis;

    @Test
    void given_the_server_forgot_its_scripts_when_a_client_acquires_then_the_script_is_reloaded_and_it_works() {
        // SCRIPT FLUSH reaches one node of a cluster; there NOSCRIPT is covered by every first call per node.
        org.junit.jupiter.api.Assumptions.assumeFalse(RedisTestResource.clusterMode());
        redis.execute("SCRIPT", "FLUSH");
        assertThat(redis.execute("SCRIPT", "EXISTS", LuaScript.ACQUIRE.sha1()).get(0).toInteger()).isZero();

        String lcid = unique("order");
        String token = acquire(lcid, "a").then().statusCode(200).extract().path("token");
        complete(lcid, token, "a").then().statusCode(200).body("status", equalTo("RELEASED"));

        assertThat(redis.execute("SCRIPT", "EXISTS", LuaScript.ACQUIRE.sha1()).get(0).toInteger()).isOne();
    }

    @Test
    void every_lock_key_of_an_lcid_shares_its_hash_tag() {
        String lcid = "order:42@eu.1";
        for (String key : LockKeys.of("default", lcid).asList()) {
            assertThat(key).contains("{default|" + lcid + "}");
            assertThat(io.vertx.redis.client.impl.ZModem.generate(key))
                    .isEqualTo(io.vertx.redis.client.impl.ZModem.generate("default|" + lcid));
        }
    }
}
