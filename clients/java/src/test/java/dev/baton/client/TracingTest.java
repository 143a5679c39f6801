package dev.baton.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client with OpenTelemetry (an SDK registered as the global one, exporting to memory), without a registered
 * SDK, and without the API on the class path at all. Against the local stub, like ClientUnitTest.
 */
@SuppressWarnings("try") // scopes are only closed
class TracingTest {
    private static final String TP_A = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    private static final String TP_B = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    private static final String RELEASED = "{\"status\":\"RELEASED\",\"lcid\":\"L\",\"pending\":0}";

    private InMemorySpanExporter spans;
    private OpenTelemetrySdk sdk;

    @BeforeEach
    void noGlobal() {
        GlobalOpenTelemetry.resetForTest();
    }

    @AfterEach
    void reset() {
        GlobalOpenTelemetry.resetForTest();
        if (sdk != null) {
            sdk.close();
        }
    }

    private void registerSdk() {
        spans = InMemorySpanExporter.create();
        sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build())
                .buildAndRegisterGlobal();
    }

    private static BatonClient client(Stub s) {
        return BatonClient.builder(s.url()).callTimeout(Duration.ofMillis(2000))
                .retryPolicy(new RetryPolicy(Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofMillis(2000))).build();
    }

    private static String acquired(String requestId, long fence, String traceparent, String tracestate) {
        return "{\"status\":\"ACQUIRED\",\"lcid\":\"L\",\"requestId\":\"" + requestId + "\",\"token\":\"tok\",\"fence\":" + fence
                + ",\"leaseMs\":30000" + (traceparent == null ? "" : ",\"traceparent\":\"" + traceparent + "\"")
                + (tracestate == null ? "" : ",\"tracestate\":\"" + tracestate + "\"") + "}";
    }

    private List<SpanData> work() {
        return spans.getFinishedSpanItems().stream().filter(d -> d.getName().equals("baton.work")).toList();
    }

    private static String traceparent(SpanContext c) {
        return "00-" + c.getTraceId() + "-" + c.getSpanId() + "-" + c.getTraceFlags().asHex();
    }

    @Test
    @Timeout(20)
    void the_handler_runs_in_a_baton_work_span_linked_to_each_submitter() throws Exception {
        registerSdk();
        AtomicInteger completes = new AtomicInteger();
        String batch = "{\"status\":\"NEXT\",\"lcid\":\"L\",\"token\":\"tok\",\"fence\":8,\"leaseMs\":30000,"
                + "\"request\":{\"requestId\":\"r2\",\"attempt\":1,\"traceparent\":\"" + TP_B + "\"},"
                + "\"requests\":[{\"requestId\":\"r2\",\"attempt\":1,\"traceparent\":\"" + TP_B + "\"},"
                + "{\"requestId\":\"r3\",\"attempt\":2},"
                + "{\"requestId\":\"r4\",\"attempt\":1,\"traceparent\":\"not-a-traceparent\",\"tracestate\":\"v=1\"}]}";
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire") ? Stub.Reply.json(200, acquired("r1", 1799999999999999L, TP_A, "vendor=x"))
                : Stub.Reply.json(200, completes.getAndIncrement() == 0 ? batch : RELEASED)); BatonClient c = client(s)) {
            Tracer app = GlobalOpenTelemetry.getTracer("app");
            Span caller = app.spanBuilder("caller").startSpan();
            List<SpanContext> current = new ArrayList<>();
            RunReport r;
            try (Scope ignored = caller.makeCurrent()) {
                r = c.run("L", w -> {
                    current.add(Span.current().getSpanContext());
                    app.spanBuilder("app-write").startSpan().end(); // nests under baton.work
                    return w.requests().size() == 1 ? "one" : Map.of("r2", 2);
                }, RunOptions.of("r1").payload(Map.of("secret", "payload")).take(3));
            } finally {
                caller.end();
            }
            assertEquals(List.of("r1", "r2", "r3", "r4"), r.handled());

            List<SpanData> work = work();
            assertEquals(2, work.size());
            SpanData first = work.get(0);
            SpanData second = work.get(1);
            assertEquals(current.get(0), first.getSpanContext(), "the span is current inside the handler");
            assertEquals(current.get(1), second.getSpanContext());
            assertEquals(caller.getSpanContext().getSpanId(), first.getParentSpanId(), "part of the holder's own trace");
            assertEquals("L", first.getAttributes().get(AttributeKey.stringKey("baton.lcid")));
            assertEquals("r1", first.getAttributes().get(AttributeKey.stringKey("baton.request_id")));
            assertEquals(1799999999999999L, first.getAttributes().get(AttributeKey.longKey("baton.fence")));
            assertEquals(Set.of("baton.lcid", "baton.request_id", "baton.fence"),
                    first.getAttributes().asMap().keySet().stream().map(AttributeKey::getKey).collect(Collectors.toSet()),
                    "never a payload, result or token");
            assertEquals(1, first.getLinks().size());
            SpanContext linkA = first.getLinks().get(0).getSpanContext();
            assertEquals(TP_A, traceparent(linkA));
            assertTrue(linkA.isRemote());
            assertEquals("x", linkA.getTraceState().get("vendor"), "tracestate kept on the link");
            assertEquals(StatusCode.UNSET, first.getStatus().getStatusCode());

            assertEquals("r2", second.getAttributes().get(AttributeKey.stringKey("baton.request_id")));
            assertEquals(8L, second.getAttributes().get(AttributeKey.longKey("baton.fence")));
            assertEquals(3L, second.getAttributes().get(AttributeKey.longKey("baton.batch_size")));
            assertEquals(List.of(TP_B), second.getLinks().stream().map(l -> traceparent(l.getSpanContext())).toList(),
                    "one link per request with a valid traceparent");
            assertEquals("r2", second.getLinks().get(0).getAttributes().get(AttributeKey.stringKey("baton.request_id")));

            List<SpanData> writes = spans.getFinishedSpanItems().stream().filter(d -> d.getName().equals("app-write")).toList();
            assertEquals(first.getSpanId(), writes.get(0).getParentSpanId(), "the application's spans nest under baton.work");
            assertEquals(second.getSpanId(), writes.get(1).getParentSpanId());

            Stub.Call acquire = s.calls.get(0);
            assertEquals(List.of(traceparent(caller.getSpanContext())), acquire.headers().get("traceparent"),
                    "the submitting call's span goes with the request");
            assertNull(acquire.headers().get("tracestate"));
            assertTrue(s.calls.stream().skip(1).allMatch(x -> x.headers().get("traceparent") == null));
            assertFalse(Span.current().getSpanContext().isValid(), "no span left current after run");
        }
    }

    @Test
    @Timeout(20)
    void a_throwing_handler_records_the_exception_on_its_span() throws Exception {
        registerSdk();
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire") ? Stub.Reply.json(200, acquired("r1", 3, null, null))
                : Stub.Reply.json(200, RELEASED)); BatonClient c = client(s)) {
            RunFailedException e = assertThrows(RunFailedException.class, () -> c.run("L", w -> {
                throw new IllegalStateException("bad input");
            }, RunOptions.of("r1")));
            assertEquals("bad input", e.getCause().getMessage());
            SpanData span = work().get(0);
            assertEquals(StatusCode.ERROR, span.getStatus().getStatusCode());
            assertTrue(span.getLinks().isEmpty(), "no link without a traceparent");
            EventData ev = span.getEvents().get(0);
            assertEquals("exception", ev.getName());
            assertEquals(IllegalStateException.class.getName(), ev.getAttributes().get(AttributeKey.stringKey("exception.type")));
            assertEquals(1, s.count("/abort"));
            assertNull(s.calls.get(0).headers().get("traceparent"), "no current span, no header");
        }
    }

    @Test
    void a_given_trace_context_wins_over_the_current_span() throws Exception {
        registerSdk();
        try (Stub s = new Stub(c -> Stub.Reply.json(200, acquired("r1", 1, null, null))); BatonClient c = client(s)) {
            Span caller = GlobalOpenTelemetry.getTracer("app").spanBuilder("caller").startSpan();
            try (Scope ignored = caller.makeCurrent()) {
                c.acquire("L", AcquireRequest.of("r1").trace(TraceContext.of(TP_B, "v=2")));
                c.acquire("L", AcquireRequest.of("r2").trace(TraceContext.NONE));
                c.acquire("L", AcquireRequest.of("r3"));
            } finally {
                caller.end();
            }
            assertEquals(List.of(TP_B), s.calls.get(0).headers().get("traceparent"));
            assertEquals(List.of("v=2"), s.calls.get(0).headers().get("tracestate"));
            assertNull(s.calls.get(1).headers().get("traceparent"));
            assertEquals(List.of(traceparent(caller.getSpanContext())), s.calls.get(2).headers().get("traceparent"));
        }
    }

    @Test
    @Timeout(20)
    void the_claim_poller_and_lock_all_trace_their_handlers() throws Exception {
        registerSdk();
        AtomicInteger claims = new AtomicInteger();
        try (Stub s = new Stub(c -> {
            if (c.path().startsWith("/v1/claims")) {
                return claims.getAndIncrement() == 0 ? Stub.Reply.json(200, "{\"status\":\"NEXT\",\"lcid\":\"C\",\"token\":\"tok\","
                        + "\"fence\":4,\"leaseMs\":30000,\"requests\":[{\"requestId\":\"orphan\",\"attempt\":2,\"traceparent\":\""
                        + TP_A + "\"}]}") : new Stub.Reply(204, null, "", Map.of(), 0);
            }
            if (c.path().endsWith("/acquire")) { // a wait turn: echoes what was submitted, as the service does
                JsonNode b = read(c.body());
                List<String> tp = c.headers().get("traceparent");
                return Stub.Reply.json(200, acquired(b.get("requestId").asText(), c.path().contains("/a/") ? 10 : 20,
                        tp == null ? null : tp.get(0), null));
            }
            return Stub.Reply.json(200, RELEASED);
        }); BatonClient c = client(s)) {
            AtomicReference<SpanContext> inClaim = new AtomicReference<>();
            ClaimReport report = c.runClaims(w -> {
                inClaim.set(Span.current().getSpanContext());
                return null;
            }, ClaimOptions.defaults().stop(() -> inClaim.get() != null));
            assertEquals(1, report.handled());
            SpanData claimed = work().get(0);
            assertEquals(inClaim.get(), claimed.getSpanContext());
            assertEquals("C", claimed.getAttributes().get(AttributeKey.stringKey("baton.lcid")));
            assertEquals("orphan", claimed.getAttributes().get(AttributeKey.stringKey("baton.request_id")));
            assertEquals(List.of(TP_A), claimed.getLinks().stream().map(l -> traceparent(l.getSpanContext())).toList());
            assertFalse(claimed.getParentSpanContext().isValid(), "a poller's work starts its own trace");

            Span caller = GlobalOpenTelemetry.getTracer("app").spanBuilder("caller").startSpan();
            SpanContext inLockAll;
            try (Scope ignored = caller.makeCurrent()) {
                inLockAll = c.lockAll(List.of("b", "a"), set -> Span.current().getSpanContext(), 30_000, Duration.ofSeconds(5));
            } finally {
                caller.end();
            }
            SpanData all = work().get(1);
            assertEquals(inLockAll, all.getSpanContext());
            assertEquals(List.of("a", "b"), all.getAttributes().get(AttributeKey.stringArrayKey("baton.lcids")));
            assertEquals(2, all.getAttributes().get(AttributeKey.longArrayKey("baton.fences")).size());
            assertEquals(10L, all.getAttributes().get(AttributeKey.longArrayKey("baton.fences")).get(0));
            assertEquals(2L, all.getAttributes().get(AttributeKey.longKey("baton.batch_size")));
            assertTrue(all.getAttributes().get(AttributeKey.stringKey("baton.request_id")).startsWith("lock-all-"));
            assertEquals(2, all.getLinks().size());
            for (LinkData l : all.getLinks()) {
                assertEquals(caller.getSpanContext().getSpanId(), l.getSpanContext().getSpanId(), "each turn was submitted by the caller");
            }
        }
    }

    @Test
    @Timeout(20)
    void without_a_registered_sdk_the_holder_works_and_installs_nothing() throws Exception {
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire") ? Stub.Reply.json(200, acquired("r1", 1, TP_A, null))
                : Stub.Reply.json(200, RELEASED)); BatonClient c = client(s)) {
            AtomicReference<String> seen = new AtomicReference<>();
            RunReport r = c.run("L", w -> {
                seen.set(w.request().traceparent());
                return null;
            }, RunOptions.of("r1"));
            assertEquals(List.of("r1"), r.handled());
            assertEquals(TP_A, seen.get());
            assertNull(s.calls.get(0).headers().get("traceparent"));
            assertFalse(GlobalOpenTelemetry.isSet(), "the application can still set its own SDK afterwards");
        }
    }

    @Test
    @Timeout(20)
    void the_no_op_tracing_leaves_the_holder_untouched() throws Exception {
        registerSdk();
        try (Stub s = new Stub(c -> c.path().endsWith("/acquire") ? Stub.Reply.json(200, acquired("r1", 1, TP_A, null))
                : Stub.Reply.json(200, RELEASED));
             BatonClient c = BatonClient.builder(s.url()).tracing(Tracing.NONE).build()) {
            Span caller = GlobalOpenTelemetry.getTracer("app").spanBuilder("caller").startSpan();
            AtomicReference<SpanContext> inHandler = new AtomicReference<>();
            try (Scope ignored = caller.makeCurrent()) {
                c.run("L", w -> {
                    inHandler.set(Span.current().getSpanContext());
                    return null;
                }, RunOptions.of("r1"));
            } finally {
                caller.end();
            }
            assertEquals(caller.getSpanContext(), inHandler.get());
            assertTrue(work().isEmpty());
            assertNull(s.calls.get(0).headers().get("traceparent"));
        }
    }

    /**
     * The client must link and run without the API jar. Only OtelTracing (and its nested classes) may name an
     * io.opentelemetry type: a symbolic reference is stored in the class file as "io/opentelemetry/...".
     */
    @Test
    void no_class_but_otel_tracing_references_opentelemetry() throws Exception {
        Path classes = Path.of(BatonClient.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertTrue(Files.isDirectory(classes), "compiled classes at " + classes);
        List<String> offenders = new ArrayList<>();
        List<String> otel = new ArrayList<>();
        int scanned = 0;
        try (Stream<Path> files = Files.walk(classes)) {
            for (Path p : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                scanned++;
                String name = p.getFileName().toString();
                boolean refers = new String(Files.readAllBytes(p), StandardCharsets.ISO_8859_1).contains("io/opentelemetry");
                if (name.equals("OtelTracing.class") || name.startsWith("OtelTracing$")) {
                    if (refers) {
                        otel.add(name);
                    }
                } else if (refers) {
                    offenders.add(classes.relativize(p).toString());
                }
            }
        }
        assertTrue(scanned > 40, "scanned " + scanned);
        assertTrue(otel.contains("OtelTracing.class"), "the scan sees references where they are");
        assertEquals(List.of(), offenders);
    }

    @Test
    @Timeout(60)
    void works_in_a_jvm_without_the_opentelemetry_jars() throws Exception {
        AtomicInteger completes = new AtomicInteger();
        try (Stub s = new Stub(c -> {
            if (c.path().endsWith("/acquire")) {
                List<String> tp = c.headers().get("traceparent");
                return Stub.Reply.json(200, acquired(read(c.body()).get("requestId").asText(), 1, tp == null ? null : tp.get(0), null));
            }
            completes.incrementAndGet();
            return Stub.Reply.json(200, RELEASED);
        })) {
            String cp = Arrays.stream(System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))
                            .split(File.pathSeparator))
                    .filter(e -> !Path.of(e).getFileName().toString().contains("opentelemetry"))
                    .collect(Collectors.joining(File.pathSeparator));
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process p = new ProcessBuilder(java, "-cp", cp, NoOtelMain.class.getName(), s.url(), TP_A)
                    .redirectErrorStream(true).start();
            String out;
            try {
                out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            } finally {
                p.destroyForcibly();
            }
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.contains("api=false none=true"), out);
            assertTrue(out.contains("handled=[r1] RELEASED"), out);
            assertEquals(List.of(TP_A), s.calls.get(0).headers().get("traceparent"), "a given trace context is sent all the same");
            assertNull(s.calls.stream().filter(x -> x.body().contains("\"r2\"")).findFirst().orElseThrow().headers().get("traceparent"));
            Stub.Call complete = s.calls.stream().filter(x -> x.path().endsWith("/complete")).findFirst().orElseThrow();
            assertEquals("seen " + TP_A, read(complete.body()).get("result").asText());
        }
    }

    private static JsonNode read(String body) {
        try {
            return BatonClient.mapper().readTree(body);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
