package dev.baton.ops;

import static dev.baton.testing.Api.acquire;
import static dev.baton.testing.Api.complete;
import static dev.baton.testing.Api.fields;
import static dev.baton.testing.Api.unique;
import static io.opentelemetry.api.common.AttributeKey.longKey;
import static io.opentelemetry.api.common.AttributeKey.stringKey;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.baton.testing.RedisTestResource;
import dev.baton.testing.TracingProfile;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * With tracing on, each call's server span says which lock it was about and how it ended, and
 * each script call is a child span of it: what an operator searches a trace backend by. No span
 * carries a payload, a result or a token.
 */
@QuarkusTest
@TestProfile(TracingProfile.class)
@WithTestResource(RedisTestResource.class)
class TracingTest {

    @Inject
    InMemorySpanExporter exporter;

    @BeforeEach
    void forgetEarlierSpans() {
        exporter.reset();
    }

    @Test
    void given_a_free_lcid_when_a_caller_acquires_then_its_span_names_the_lock_the_outcome_and_the_fence() {
        String lcid = unique("trace");
        long fence = acquire(lcid, "r1").then().statusCode(200).extract().jsonPath().getLong("fence");

        SpanData server = serverSpan("acquire", lcid);
        assertThat(server.getAttributes().get(stringKey("baton.tenant"))).isEqualTo("default");
        assertThat(server.getAttributes().get(stringKey("baton.request_id"))).isEqualTo("r1");
        assertThat(server.getAttributes().get(stringKey("baton.outcome"))).isEqualTo("ACQUIRED");
        assertThat(server.getAttributes().get(longKey("baton.fence"))).isEqualTo(fence);

        SpanData script = childOf(server, "acquire.lua");
        assertThat(script.getKind()).isEqualTo(SpanKind.CLIENT);
        assertThat(script.getAttributes().get(stringKey("db.system"))).isEqualTo("redis");
    }

    @Test
    void given_a_held_lock_when_another_request_queues_and_the_holder_completes_then_QUEUED_then_NEXT_with_its_fence() {
        String lcid = unique("trace");
        String token = acquire(lcid, fields("requestId", "first", "payload", "{\"secret\":\"payload-text\"}")).then()
                .statusCode(200).extract().path("token");
        acquire(lcid, fields("requestId", "second", "payload", "{\"secret\":\"payload-text\"}")).then().statusCode(202);
        long nextFence = complete(lcid, fields("token", token, "requestId", "first", "result",
                "{\"secret\":\"result-text\"}")).then().statusCode(200).extract().jsonPath().getLong("fence");

        SpanData queued = serverSpan("acquire", lcid, span -> "second".equals(span.getAttributes().get(
                stringKey("baton.request_id"))));
        assertThat(queued.getAttributes().get(stringKey("baton.outcome"))).isEqualTo("QUEUED");
        assertThat(queued.getAttributes().get(longKey("baton.fence"))).isNull();

        SpanData completed = serverSpan("complete", lcid);
        assertThat(completed.getAttributes().get(stringKey("baton.request_id"))).isEqualTo("first");
        assertThat(completed.getAttributes().get(stringKey("baton.outcome"))).isEqualTo("NEXT");
        assertThat(completed.getAttributes().get(longKey("baton.fence"))).isEqualTo(nextFence);
        childOf(completed, "complete.lua");

        // Nothing secret in any attribute of any span of these calls.
        for (SpanData span : exporter.getFinishedSpanItems()) {
            span.getAttributes().forEach((key, value) -> assertThat(String.valueOf(value))
                    .doesNotContain("payload-text").doesNotContain("result-text").doesNotContain(token));
        }
    }

    @Test
    void given_a_wrong_token_when_the_caller_completes_then_the_span_carries_the_problem_code() {
        String lcid = unique("trace");
        acquire(lcid, "r1").then().statusCode(200);
        complete(lcid, "0123456789abcdef0123456789abcdef", "r1").then().statusCode(409);

        SpanData completed = serverSpan("complete", lcid);
        assertThat(completed.getAttributes().get(stringKey("baton.outcome"))).isEqualTo("LOCK_LOST");
    }

    private SpanData serverSpan(String operation, String lcid) {
        return serverSpan(operation, lcid, span -> true);
    }

    /** The server span of a call on lcid whose route ends with the operation; waits for its export. */
    private SpanData serverSpan(String operation, String lcid, Predicate<SpanData> also) {
        return awaitSpan(span -> span.getKind() == SpanKind.SERVER && span.getName().endsWith("/" + operation)
                && lcid.equals(span.getAttributes().get(stringKey("baton.lcid"))) && also.test(span),
                "server span of " + operation + " on " + lcid);
    }

    private SpanData childOf(SpanData parent, String name) {
        SpanData child = awaitSpan(span -> span.getName().equals(name)
                && span.getParentSpanId().equals(parent.getSpanId()), name + " under " + parent.getName());
        assertThat(child.getTraceId()).isEqualTo(parent.getTraceId());
        return child;
    }

    private SpanData awaitSpan(Predicate<SpanData> wanted, String what) {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (true) {
            List<SpanData> spans = exporter.getFinishedSpanItems();
            Optional<SpanData> found = spans.stream().filter(wanted).findFirst();
            if (found.isPresent()) {
                return found.get();
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no " + what + " among " + spans.stream().map(SpanData::getName).toList());
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
