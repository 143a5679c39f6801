package dev.baton.api;

import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.server.ServerRequestFilter;

import dev.baton.lock.ProblemCode;
import io.vertx.ext.web.RoutingContext;

/**
 * A raw {@code ;} in a path segment is refused before a call does anything (after
 * {@link CallerFilter}, so an anonymous caller still gets its 401 first). JAX-RS reads it as the
 * start of matrix parameters and drops the rest of the segment, so
 * {@code /v1/locks/order-1;x/acquire} would lock {@code order-1}: the lcid a client meant is never
 * silently changed. ({@code %3B} reaches the identifier rules.)
 */
public class PathSegments {

    @ServerRequestFilter(priority = Priorities.USER + 100)
    public Response noMatrixParameters(ContainerRequestContext request, RoutingContext context) {
        String path = context.request().path();
        if (path == null || !path.startsWith("/v1/")) {
            return null;
        }
        int semicolon = path.indexOf(';');
        if (semicolon >= 0) {
            String field = parameterAt(path, semicolon);
            return ProblemMappers.build(ProblemCode.INVALID_REQUEST,
                    field + " must not contain ';' (the path segment would be cut there)", request.getUriInfo(),
                    field, null, null, null).build();
        }
        return null;
    }

    /** The name of the path parameter whose segment holds position {@code at}: lcid, requestId or path. */
    private static String parameterAt(String path, int at) {
        String template = Routes.API.template(path.replaceAll(";[^/]*", "")).orElse("");
        String[] templateSegments = template.split("/");
        int segment = path.substring(0, at).split("/", -1).length - 1;
        if (segment < templateSegments.length && templateSegments[segment].startsWith("{")) {
            return templateSegments[segment].substring(1, templateSegments[segment].length() - 1);
        }
        return "path";
    }
}
