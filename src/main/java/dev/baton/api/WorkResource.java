package dev.baton.api;

import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.RestQuery;

import dev.baton.lock.BusyLocks;
import dev.baton.lock.RequestRules;
import dev.baton.lock.WorkCoordinator;
import dev.baton.security.Callers;
import io.opentelemetry.api.trace.Span;
import io.quarkus.security.identity.SecurityIdentity;
import io.smallrye.mutiny.Uni;

/** Work across the caller's lcids: orphan rescue for workers, and the dead letters for operators. */
@Path("/v1")
@Produces(MediaType.APPLICATION_JSON)
public class WorkResource {

    private final WorkCoordinator coordinator;
    private final RequestRules rules;
    private final Callers callers;
    private final SecurityIdentity identity;

    public WorkResource(WorkCoordinator coordinator, RequestRules rules, Callers callers, SecurityIdentity identity) {
        this.coordinator = coordinator;
        this.rules = rules;
        this.callers = callers;
        this.identity = identity;
    }

    /** NEXT on some lcid whose requests wait with no live holder, or 204 when there is none. */
    @POST
    @Path("claims")
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<Response> claim(ClaimBody body) {
        String tenant = callers.of(identity).tenant();
        long leaseMs = rules.leaseMs(body == null ? null : body.leaseMs());
        int take = rules.take(body == null ? null : body.take(), 1);
        String prefix = rules.lcidPrefix(body == null ? null : body.lcidPrefix());
        Span span = CallSpan.named(tenant, null, null);
        return coordinator.claim(tenant, leaseMs, take, prefix).map(next -> next
                .map(outcome -> {
                    CallSpan.answered(span, outcome);
                    return Response.ok(outcome, MediaType.APPLICATION_JSON_TYPE).build();
                })
                .orElseGet(() -> Response.noContent().build()));
    }

    /** The tenant's busy lcids, longest held or longest queue first (operators). */
    @GET
    @Path("busy-locks")
    @Consumes(MediaType.WILDCARD)
    public Uni<BusyLocks> busyLocks(@RestQuery String order, @RestQuery @DefaultValue("0") String offset,
            @RestQuery @DefaultValue("50") String limit) {
        String tenant = callers.admin(identity).tenant();
        return coordinator.busyLocks(tenant, rules.busyOrder(order), rules.offset(offset), rules.busyLimit(limit));
    }

    @GET
    @Path("dead-letters")
    @Consumes(MediaType.WILDCARD)
    public Uni<DeadLetterList> deadLetters(@RestQuery @DefaultValue("50") String limit) {
        String tenant = callers.admin(identity).tenant();
        return coordinator.deadLetters(tenant, rules.limit(limit)).map(DeadLetterList::of);
    }
}
