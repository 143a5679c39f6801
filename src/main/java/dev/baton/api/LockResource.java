package dev.baton.api;

import java.util.List;

import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.RestHeader;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;

import com.fasterxml.jackson.core.JsonProcessingException;

import dev.baton.lock.LockCoordinator;
import dev.baton.lock.LockView;
import dev.baton.lock.Outcome;
import dev.baton.lock.QueueView;
import dev.baton.lock.RequestRules;
import dev.baton.lock.RequestView;
import dev.baton.lock.TraceContext;
import dev.baton.redis.ScriptCall;
import dev.baton.security.Callers;
import io.opentelemetry.api.trace.Span;
import io.quarkus.security.identity.SecurityIdentity;
import io.smallrye.mutiny.Uni;

/**
 * Protocol v1 over HTTP: resolves the caller's tenant, validates input, runs one coordinator
 * operation, answers its outcome.
 */
@Path("/v1/locks/{lcid}")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class LockResource {

    private final LockCoordinator coordinator;
    private final RequestRules rules;
    private final Callers callers;
    private final SecurityIdentity identity;
    private final NoBody noBody;

    public LockResource(LockCoordinator coordinator, RequestRules rules, Callers callers, SecurityIdentity identity,
            NoBody noBody) {
        this.coordinator = coordinator;
        this.rules = rules;
        this.callers = callers;
        this.identity = identity;
        this.noBody = noBody;
    }

    @POST
    @Path("acquire")
    public Uni<Response> acquire(@RestPath String lcid, @RestHeader String traceparent, @RestHeader String tracestate,
            AcquireBody body) {
        String tenant = tenant();
        String id = rules.lcid(lcid);
        rules.body(body);
        String requestId = rules.requestId(body.requestId());
        return answer(CallSpan.named(tenant, id, requestId), coordinator.acquire(tenant, id, requestId,
                rules.json("payload", body.payload()), rules.leaseMs(body.leaseMs()), rules.waitMode(body.mode()),
                rules.waitMs(body.waitMs()), rules.take(body.take(), 1), TraceContext.of(traceparent, tracestate)));
    }

    @POST
    @Path("heartbeat")
    public Uni<Response> heartbeat(@RestPath String lcid, HeartbeatBody body) {
        String tenant = tenant();
        String id = rules.lcid(lcid);
        rules.body(body);
        return answer(CallSpan.named(tenant, id, null), coordinator.heartbeat(tenant, id, rules.token(body.token()),
                rules.optionalLeaseMs(body.leaseMs())));
    }

    @POST
    @Path("complete")
    public Uni<Response> complete(@RestPath String lcid, CompleteBody body) {
        String tenant = tenant();
        String id = rules.lcid(lcid);
        rules.body(body);
        String token = rules.token(body.token());
        List<ScriptCall.Completion> completions = rules.completions(body.requestId(), body.result(), body.completed());
        return answer(CallSpan.named(tenant, id, completions.get(0).requestId()), coordinator.complete(tenant, id,
                token, completions, rules.namesBatch(body.completed()), rules.take(body.take(), 0)));
    }

    @POST
    @Path("abort")
    public Uni<Response> abort(@RestPath String lcid, AbortBody body) {
        String tenant = tenant();
        String id = rules.lcid(lcid);
        rules.body(body);
        String token = body.token() == null ? null : rules.token(body.token());
        String requestId = rules.requestId(body.requestId());
        return answer(CallSpan.named(tenant, id, requestId), coordinator.abort(tenant, id, requestId, token,
                Boolean.TRUE.equals(body.requeue()), rules.reason(body.reason())));
    }

    @GET
    @Consumes(MediaType.WILDCARD)
    public Uni<LockView> lock(@RestPath String lcid) {
        String tenant = tenant();
        String id = rules.lcid(lcid);
        CallSpan.named(tenant, id, null);
        return coordinator.viewLock(tenant, id);
    }

    @GET
    @Path("requests/{requestId}")
    @Consumes(MediaType.WILDCARD)
    public Uni<RequestView> request(@RestPath String lcid, @RestPath String requestId, @RestQuery String waitMs) {
        String tenant = tenant();
        String id = rules.lcid(lcid);
        String request = rules.requestId(requestId);
        CallSpan.named(tenant, id, request);
        return coordinator.viewRequest(tenant, id, request, rules.waitMs(waitMs));
    }

    /** A page of the queue, head first, for operators (admin key): state, attempt, age, payload on request. */
    @GET
    @Path("queue")
    @Consumes(MediaType.WILDCARD)
    public Uni<QueueView> queue(@RestPath String lcid, @RestQuery @DefaultValue("0") String offset,
            @RestQuery @DefaultValue("50") String limit, @RestQuery String payload) {
        String tenant = callers.admin(identity).tenant();
        return coordinator.viewQueue(tenant, rules.lcid(lcid), rules.offset(offset), rules.queueLimit(limit),
                rules.flag("payload", payload));
    }

    /** Queues a DEAD request again (operators, after fixing what killed it). */
    @POST
    @Path("requests/{requestId}/retry")
    @Consumes(MediaType.WILDCARD)
    public Uni<Response> retry(@RestPath String lcid, @RestPath String requestId, String body)
            throws JsonProcessingException {
        String tenant = callers.admin(identity).tenant();
        noBody.check(body);
        String id = rules.lcid(lcid);
        String request = rules.requestId(requestId);
        return answer(CallSpan.named(tenant, id, request), coordinator.retry(tenant, id, request));
    }

    private String tenant() {
        return callers.of(identity).tenant();
    }

    private static Uni<Response> answer(Span span, Uni<Outcome> outcome) {
        return outcome.map(o -> {
            CallSpan.answered(span, o);
            return Response.status(o.httpStatus()).entity(o).type(MediaType.APPLICATION_JSON_TYPE).build();
        });
    }
}
