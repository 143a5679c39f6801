package dev.baton.api;

import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;

import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;

import dev.baton.config.BatonConfig;
import dev.baton.lock.LockProblem;
import dev.baton.lock.ProblemCode;
import dev.baton.redis.BackendUnavailableException;
import dev.baton.redis.LayoutMismatchException;
import dev.baton.redis.ReplicasNotAckedException;
import dev.baton.security.AccessDenied;
import dev.baton.security.BearerAuthMechanism;

/**
 * Every error leaves as {@code application/problem+json} with a stable {@code code}; no stack
 * trace or internal message ever reaches a body.
 */
public class ProblemMappers {

    public static final String PROBLEM_JSON = "application/problem+json";
    private static final Logger LOG = Logger.getLogger(ProblemMappers.class);

    private final BatonConfig config;

    public ProblemMappers(BatonConfig config) {
        this.config = config;
    }

    @ServerExceptionMapper
    public Response lockProblem(LockProblem problem, UriInfo uri) {
        ProblemCode code = problem.code();
        Response.ResponseBuilder response = build(new ProblemBody(typeOf(code), ProblemType.title(code),
                ProblemType.status(code), problem.getMessage(), uri == null ? null : uri.getPath(), code.name(),
                problem.field(), problem.state(), problem.attempt(), problem.resultJson(), problem.activeRequestIds()));
        if (problem.code() == ProblemCode.QUEUE_FULL) {
            response.header("Retry-After", config.queue().retryAfterSeconds());
        }
        return response.build();
    }

    @ServerExceptionMapper
    public Response accessDenied(AccessDenied denied, UriInfo uri) {
        return build(codeOf(denied), denied.getMessage(), uri, null, null, null, null).build();
    }

    static ProblemCode codeOf(AccessDenied denied) {
        return denied.reason() == AccessDenied.Reason.FORBIDDEN ? ProblemCode.FORBIDDEN : ProblemCode.UNAUTHORIZED;
    }

    @ServerExceptionMapper
    public Response backendUnavailable(BackendUnavailableException e, UriInfo uri) {
        String detail;
        if (e instanceof LayoutMismatchException) {
            // LayoutVersion logged the cause once; a line per refused call would bury it.
            LOG.debugf("refused on %s: %s", uri.getPath(), e.getMessage());
            detail = "this replica does not read the Redis layout in use (an upgrade in progress?), retry later";
        } else {
            // redis.BackendStatus says it once per outage; a line per refused call would bury it.
            LOG.debugf("Redis unavailable on %s: %s", uri.getPath(), e.getMessage());
            detail = e instanceof ReplicasNotAckedException
                    ? "the change was not yet confirmed by enough Redis replicas, retry later (the retry is safe)"
                    : "the lock store is unavailable, retry later";
        }
        return build(ProblemCode.BACKEND_UNAVAILABLE, detail, uri,
                null, null, null, null)
                .header("Retry-After", config.backend().retryAfterSeconds())
                .build();
    }

    /** Wins over the built-in mapper of the same type, which answers in its own format. */
    @ServerExceptionMapper
    public Response wrongType(MismatchedInputException e, UriInfo uri) {
        return malformedJson(e, uri);
    }

    @ServerExceptionMapper
    public Response malformedJson(JsonProcessingException e, UriInfo uri) {
        String field = "body";
        String detail = "the body is not valid JSON";
        String duplicate = JsonStrictness.duplicateField(e);
        if (duplicate != null) {
            field = duplicate;
            detail = "duplicate field '" + duplicate.substring(duplicate.lastIndexOf('.') + 1) + "'";
        } else if (e instanceof UnrecognizedPropertyException unknown) {
            field = fieldPath(unknown);
            detail = "unknown field '" + field + "'";
        } else if (e instanceof JsonMappingException mapping) {
            field = fieldPath(mapping);
            detail = "body".equals(field) ? "the body must be a JSON object with the documented fields"
                    : field + " has the wrong type or form";
        }
        return build(ProblemCode.INVALID_REQUEST, detail, uri, field, null, null, null).build();
    }

    @ServerExceptionMapper
    public Response notUtf8(Utf8Bodies.NotUtf8 e, UriInfo uri) {
        return build(ProblemCode.INVALID_REQUEST, e.getMessage(), uri, "body", null, null, null).build();
    }

    @ServerExceptionMapper
    public Response web(WebApplicationException e, UriInfo uri) {
        if (e.getCause() instanceof JsonProcessingException json) {
            return malformedJson(json, uri);
        }
        int status = e.getResponse().getStatus();
        ProblemCode code = switch (status) {
            case 404 -> ProblemCode.NOT_FOUND;
            case 405 -> ProblemCode.METHOD_NOT_ALLOWED;
            case 406 -> ProblemCode.NOT_ACCEPTABLE;
            case 413 -> ProblemCode.PAYLOAD_TOO_LARGE;
            case 415 -> ProblemCode.UNSUPPORTED_MEDIA_TYPE;
            default -> status >= 500 ? ProblemCode.INTERNAL_ERROR : ProblemCode.INVALID_REQUEST;
        };
        String detail = switch (code) {
            case NOT_FOUND -> "no such resource";
            case METHOD_NOT_ALLOWED -> "method not allowed on this resource";
            case NOT_ACCEPTABLE -> "only application/json and application/problem+json are produced";
            case UNSUPPORTED_MEDIA_TYPE -> "send the body as application/json";
            case PAYLOAD_TOO_LARGE -> "the request body is too large";
            case INTERNAL_ERROR -> "internal error";
            default -> "the request could not be read";
        };
        Response.ResponseBuilder response = build(code, detail, uri, null, null, null, null);
        if (code == ProblemCode.METHOD_NOT_ALLOWED) {
            // RFC 9110: a 405 lists the methods the resource has; the REST layer does not say them.
            Routes.API.allowed(uri.getPath()).ifPresent(allowed -> response.header("Allow", allowed));
        }
        return response.build();
    }

    @ServerExceptionMapper
    public Response unexpected(Throwable e, UriInfo uri) {
        LOG.errorf(e, "unexpected failure on %s", uri.getPath());
        return build(ProblemCode.INTERNAL_ERROR, "internal error", uri, null, null, null, null).build();
    }

    private static String fieldPath(JsonMappingException e) {
        StringBuilder path = new StringBuilder();
        for (JsonMappingException.Reference ref : e.getPath()) {
            if (ref.getFieldName() != null) {
                if (path.length() > 0) {
                    path.append('.');
                }
                path.append(ref.getFieldName());
            } else if (ref.getIndex() >= 0) {
                path.append('[').append(ref.getIndex()).append(']');
            }
        }
        return path.length() == 0 ? "body" : path.toString();
    }

    static Response.ResponseBuilder build(ProblemCode code, String detail, UriInfo uri, String field, String state,
            Integer attempt, String resultJson) {
        return build(body(code, detail, uri == null ? null : uri.getPath(), field, state, attempt, resultJson));
    }

    private static Response.ResponseBuilder build(ProblemBody body) {
        CallSpan.problem(body.code());
        Response.ResponseBuilder response = Response.status(body.status()).type(PROBLEM_JSON).entity(body);
        String challenge = challengeOf(body.code());
        if (challenge != null) {
            response.header("WWW-Authenticate", challenge);
        }
        return response;
    }

    /** RFC 6750: a 401 says the bearer token (or its absence) does not do, a 403 that it lacks the right. */
    static String challengeOf(String code) {
        if (ProblemCode.UNAUTHORIZED.name().equals(code)) {
            return BearerAuthMechanism.CHALLENGE;
        }
        return ProblemCode.FORBIDDEN.name().equals(code) ? BearerAuthMechanism.FORBIDDEN_CHALLENGE : null;
    }

    static ProblemBody body(ProblemCode code, String detail, String path, String field, String state, Integer attempt,
            String resultJson) {
        return new ProblemBody(typeOf(code), ProblemType.title(code), ProblemType.status(code), detail, path,
                code.name(), field, state, attempt, resultJson);
    }

    private static String typeOf(ProblemCode code) {
        return "urn:baton:problem:" + code.name().toLowerCase().replace('_', '-');
    }
}
