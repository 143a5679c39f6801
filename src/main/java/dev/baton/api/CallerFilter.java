package dev.baton.api;

import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.server.ServerRequestFilter;

import dev.baton.security.AccessDenied;
import dev.baton.security.Callers;
import io.quarkus.security.identity.SecurityIdentity;

/**
 * Refuses callers without a key before the body is read, so that an anonymous caller learns
 * nothing from validation errors.
 */
public class CallerFilter {

    private final Callers callers;
    private final SecurityIdentity identity;

    public CallerFilter(Callers callers, SecurityIdentity identity) {
        this.callers = callers;
        this.identity = identity;
    }

    @ServerRequestFilter
    public Response requireCaller(ContainerRequestContext request) {
        if (!request.getUriInfo().getPath().startsWith("/v1/")) {
            return null;
        }
        try {
            callers.of(identity);
            return null;
        } catch (AccessDenied denied) {
            return ProblemMappers.build(ProblemMappers.codeOf(denied), denied.getMessage(), request.getUriInfo(), null,
                    null, null, null).build();
        }
    }
}
