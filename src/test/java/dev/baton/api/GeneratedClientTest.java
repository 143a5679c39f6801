package dev.baton.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;

import org.junit.jupiter.api.Test;

import dev.baton.client.ApiClient;
import dev.baton.client.api.LocksApi;
import dev.baton.client.model.AcquireOutcome;
import dev.baton.client.model.AcquireRequest;
import dev.baton.client.model.Acquired;
import dev.baton.client.model.Complete200Response;
import dev.baton.client.model.CompleteRequest;
import dev.baton.client.model.Next;
import dev.baton.client.model.Queued;
import dev.baton.client.model.Released;
import dev.baton.testing.Api;
import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * A client generated from openapi.yaml by openapi-generator (Java, java.net.http) talks to the
 * service: the contract is good enough to generate a working client from.
 */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class GeneratedClientTest {

    @TestHTTPResource("/")
    URI base;

    @Test
    void given_a_generated_client_when_it_runs_acquire_queue_complete_then_the_handoff_works() throws Exception {
        ApiClient client = new ApiClient();
        client.updateBaseUri(base.toString().replaceAll("/$", ""));
        LocksApi locks = new LocksApi(client);
        String lcid = Api.unique("generated");
        // The trace context headers are optional: a generated client passes null for none.
        AcquireOutcome granted = locks.acquire(lcid, new AcquireRequest().requestId("pay-1").payload(
                java.util.Map.of("amount", 10)), null, null);
        Acquired acquired = granted.getAcquired();
        assertThat(acquired.getStatus()).isEqualTo(Acquired.StatusEnum.ACQUIRED);
        assertThat(acquired.getToken()).isNotBlank();

        // A second caller is queued (202, the same schema).
        Queued queued = locks.acquire(lcid, new AcquireRequest().requestId("stock-1"),
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", null).getQueued();
        assertThat(queued.getPosition()).isEqualTo(1);

        Complete200Response handedOff = locks.complete(lcid,
                new CompleteRequest().token(acquired.getToken()).requestId("pay-1"));
        Next next = handedOff.getNext();
        assertThat(next.getRequest().getRequestId()).isEqualTo("stock-1");
        assertThat(next.getToken()).isEqualTo(acquired.getToken());
        assertThat(next.getFence()).isGreaterThan(acquired.getFence());

        Released released = locks.complete(lcid, new CompleteRequest().token(next.getToken()).requestId("stock-1"))
                .getReleased();
        assertThat(released.getStatus()).isEqualTo(Released.StatusEnum.RELEASED);
        assertThat(locks.viewLock(lcid).getHeld()).isFalse();
    }
}
