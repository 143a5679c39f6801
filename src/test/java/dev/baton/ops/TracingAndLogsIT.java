package dev.baton.ops;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;

import dev.baton.security.ApiKeys;
import dev.baton.testing.Contract;
import dev.baton.testing.PackagedService;
import dev.baton.testing.TestRedis;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;

/**
 * The packaged service as an operator runs it with tracing turned on: it logs JSON lines an
 * operator can search by lcid, requestId and traceId, never a key, token or payload, and it
 * exports its spans over OTLP to the collector it was given.
 */
class TracingAndLogsIT {

    private static final String KEY = "it-trace-key";
    private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String SECRET_PAYLOAD = "payload-secret-7f3a";

    @Test
    void given_tracing_on_when_a_request_is_dead_lettered_then_a_json_line_names_it_and_spans_reach_the_collector()
            throws Exception {
        AtomicInteger exports = new AtomicInteger();
        // OTLP over HTTP: a collector answers 200 with an (empty) ExportTraceServiceResponse.
        HttpServer collector = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        collector.createContext("/v1/traces", exchange -> {
            exchange.getRequestBody().readAllBytes();
            exports.incrementAndGet();
            exchange.getResponseHeaders().add("Content-Type", "application/x-protobuf");
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        collector.start();
        TestRedis redis = TestRedis.start();
        int port = EmbeddedRedis.freePort();
        PackagedService service = PackagedService.launch(Map.of(
                "QUARKUS_REDIS_HOSTS", redis.url(),
                "QUARKUS_HTTP_PORT", Integer.toString(port),
                "QUARKUS_MANAGEMENT_PORT", Integer.toString(EmbeddedRedis.freePort()),
                "BATON_AUTH_API_KEYS", "team-t:" + ApiKeys.sha256(KEY),
                "BATON_MAX_ATTEMPTS", "1",
                "QUARKUS_OTEL_SDK_DISABLED", "false",
                "QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:" + collector.getAddress().getPort(),
                "QUARKUS_OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf",
                "QUARKUS_OTEL_BSP_SCHEDULE_DELAY", "200ms"));
        try {
            service.awaitListening();
            String base = "http://127.0.0.1:" + port + "/v1/locks/it-trace/";
            String token = call().header("traceparent", "00-" + TRACE_ID + "-00f067aa0ba902b7-01")
                    .body("{\"requestId\":\"poison\",\"payload\":{\"note\":\"" + SECRET_PAYLOAD + "\"}}")
                    .post(base + "acquire").then().statusCode(200).extract().path("token");
            // Its only attempt ends in an abort with requeue: DEAD, in the abort call's trace.
            call().header("traceparent", "00-" + TRACE_ID + "-b7ad6b7169203331-01")
                    .body("{\"requestId\":\"poison\",\"token\":\"" + token + "\",\"requeue\":true}")
                    .post(base + "abort").then().statusCode(200);

            JsonNode dead = awaitLine(service, line -> line.path("message").asText().contains("is DEAD"));
            assertThat(dead.path("level").asText()).isEqualTo("WARN");
            // What the operator can do, and nothing the API does not offer (there is no drop).
            assertThat(dead.path("message").asText()).endsWith("for an operator to retry it.")
                    .doesNotContain("drop");
            JsonNode mdc = dead.path("mdc");
            assertThat(mdc.path("lcid").asText()).isEqualTo("it-trace");
            assertThat(mdc.path("requestId").asText()).isEqualTo("poison");
            assertThat(mdc.path("tenant").asText()).isEqualTo("team-t");
            assertThat(mdc.path("traceId").asText()).isEqualTo(TRACE_ID);

            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (exports.get() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertThat(exports.get()).as("OTLP exports the collector received").isPositive();

            List<String> lines = service.output().lines().toList();
            assertThat(lines).as("every line is JSON").allSatisfy(line -> new ObjectMapper().readTree(line));
            assertThat(lines).noneMatch(line -> line.contains(KEY) || line.contains(token)
                    || line.contains(SECRET_PAYLOAD));
        } finally {
            service.process().destroy();
            service.process().waitFor(30, TimeUnit.SECONDS);
            redis.close();
            collector.stop(0);
        }
    }

    private static RequestSpecification call() {
        return given().filter(Contract.FILTER).auth().oauth2(KEY).contentType(ContentType.JSON);
    }

    private static JsonNode awaitLine(PackagedService service, java.util.function.Predicate<JsonNode> wanted)
            throws Exception {
        ObjectMapper json = new ObjectMapper();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            for (String line : service.output().lines().toList()) {
                if (line.startsWith("{")) {
                    JsonNode node = json.readTree(line);
                    if (wanted.test(node)) {
                        return node;
                    }
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no such log line in:\n" + service.output());
            }
            Thread.sleep(100);
        }
    }
}
