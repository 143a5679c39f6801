package dev.baton.api;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.baton.lock.ProblemCode;
import dev.baton.security.TokenRejection;
import io.quarkus.security.AuthenticationFailedException;
import io.vertx.ext.web.Router;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;

/**
 * Failures that happen before a request reaches the REST layer (a bad API key or token during
 * proactive authentication, a body over the size limit) also leave as problem+json. What the HTTP
 * codec refuses before any handler runs (a request line over 4096 bytes: 414, headers over 20 KiB: 431, a
 * malformed request line: 400) is answered by Vert.x itself with an empty body.
 */
@ApplicationScoped
public class HttpFailures {

    private final ObjectMapper mapper;

    private final BodyHandler chunkedBodies = BodyHandler.create(false).setBodyLimit(MAX_BODY_BYTES)
            .setHandleFileUploads(false)
            // Never a null body, not even an empty one: the REST layer would then wait for a body
            // that was already read.
            .setPreallocateBodyBuffer(true);

    public HttpFailures(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    /** Bodies above this are refused from their Content-Length, before a byte of them is read. */
    static final long MAX_BODY_BYTES = 256 * 1024;

    void register(@Observes Router router) {
        router.route().order(Integer.MIN_VALUE).handler(this::limitBody);
        router.route().order(Integer.MIN_VALUE + 1).handler(this::limitChunkedBody);
        router.route().order(Integer.MIN_VALUE).failureHandler(this::handle);
    }

    private void limitBody(RoutingContext context) {
        String length = context.request().getHeader("Content-Length");
        if (length != null && isOver(length)) {
            context.response().putHeader("Connection", "close");
            send(context, ProblemCode.PAYLOAD_TOO_LARGE, "the request body is larger than " + MAX_BODY_BYTES + " bytes");
            return;
        }
        context.next();
    }

    /**
     * A chunked HTTP/1.1 body (no Content-Length) is read here, before the REST layer (which then
     * uses it as read), so that it is cut off at the same limit as a 413 problem from handle()
     * below, instead of an empty 413 from the HTTP layer at its own 1 MiB. Not over HTTP/2, where
     * the REST layer cannot take a body already read; HTTP/2 clients send a length in practice.
     */
    private void limitChunkedBody(RoutingContext context) {
        HttpServerRequest request = context.request();
        if (request.version() == HttpVersion.HTTP_2 || request.getHeader("Content-Length") != null
                || !request.headers().contains("Transfer-Encoding", "chunked", true)) {
            context.next();
            return;
        }
        chunkedBodies.handle(context);
    }

    private static boolean isOver(String length) {
        try {
            return Long.parseLong(length.trim()) > MAX_BODY_BYTES;
        } catch (NumberFormatException e) {
            return false; // the HTTP layer rejects it
        }
    }

    private void handle(RoutingContext context) {
        if (context.response().headWritten()) {
            context.next();
            return;
        }
        if (context.failure() instanceof AuthenticationFailedException failure) {
            send(context, ProblemCode.UNAUTHORIZED, TokenRejection.of(failure).detail());
        } else if (context.statusCode() == 413) {
            send(context, ProblemCode.PAYLOAD_TOO_LARGE, "the request body is larger than the server accepts");
        } else {
            context.next();
        }
    }

    private void send(RoutingContext context, ProblemCode code, String detail) {
        ProblemBody body = ProblemMappers.body(code, detail, context.request().path(), null, null, null, null);
        CallSpan.problem(code.name());
        String challenge = ProblemMappers.challengeOf(code.name());
        if (challenge != null) {
            context.response().putHeader("WWW-Authenticate", challenge);
        }
        try {
            context.response().setStatusCode(ProblemType.status(code))
                    .putHeader("Content-Type", ProblemMappers.PROBLEM_JSON)
                    .end(mapper.writeValueAsString(body));
        } catch (JsonProcessingException e) {
            context.response().setStatusCode(ProblemType.status(code)).end();
        }
    }
}
