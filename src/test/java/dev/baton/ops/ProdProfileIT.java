package dev.baton.ops;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.baton.testing.Contract;
import dev.baton.testing.PackagedService;
import dev.baton.testing.TestRedis;
import io.restassured.http.ContentType;

/** The packaged service, started as an operator would: prod profile, configured by environment. */
class ProdProfileIT {

    @Test
    void given_the_prod_profile_and_no_quarkus_redis_hosts_when_started_then_it_exits_with_a_clear_message()
            throws Exception {
        PackagedService service = PackagedService.launch(Map.of());

        boolean exited = service.process().waitFor(60, TimeUnit.SECONDS);
        String output = service.output();
        if (!exited) {
            service.process().destroyForcibly();
        }

        assertThat(exited).as("the service should refuse to start, output:%n%s", output).isTrue();
        assertThat(service.process().exitValue()).isNotZero();
        assertThat(output).contains("Baton needs Redis or Valkey: set QUARKUS_REDIS_HOSTS");
    }

    @Test
    void given_baton_settings_in_environment_variables_when_started_then_they_apply() throws Exception {
        TestRedis redis = TestRedis.start();
        String redisUrl = redis.url();
        int port = EmbeddedRedis.freePort();
        PackagedService service = PackagedService.launch(Map.of(
                "QUARKUS_REDIS_HOSTS", redisUrl,
                "QUARKUS_HTTP_PORT", Integer.toString(port),
                "BATON_AUTH_API_KEYS", "team-a:" + dev.baton.security.ApiKeys.sha256("it-key-a"),
                "BATON_LEASE_DEFAULT_MS", "12345",
                "BATON_QUEUE_MAX_LENGTH", "1",
                "BATON_QUEUE_RETRY_AFTER_SECONDS", "7"));
        try {
            service.awaitListening();
            String base = "http://127.0.0.1:" + port + "/v1/locks/env-" + System.nanoTime() + "/acquire";

            given().filter(Contract.FILTER).contentType(ContentType.JSON).body("{\"requestId\":\"a\"}").post(base)
                    .then().statusCode(401).body("code", equalTo("UNAUTHORIZED")); // auth is on in prod
            given().filter(Contract.FILTER).auth().oauth2("it-key-a").contentType(ContentType.JSON)
                    .body("{\"requestId\":\"a\"}").post(base)
                    .then().statusCode(200).body("leaseMs", equalTo(12345));
            given().filter(Contract.FILTER).auth().oauth2("it-key-a").contentType(ContentType.JSON)
                    .body("{\"requestId\":\"b\"}").post(base)
                    .then().statusCode(202);
            given().filter(Contract.FILTER).auth().oauth2("it-key-a").contentType(ContentType.JSON)
                    .body("{\"requestId\":\"c\"}").post(base)
                    .then().statusCode(429).header("Retry-After", "7").body("code", equalTo("QUEUE_FULL"));
        } finally {
            service.process().destroy();
            service.process().waitFor(30, TimeUnit.SECONDS);
            redis.close();
        }
    }

    @Test
    void given_the_prod_profile_with_keys_when_it_starts_and_serves_past_its_first_sweep_then_it_logs_no_warning()
            throws Exception {
        TestRedis redis = TestRedis.start();
        String redisUrl = redis.url();
        int port = EmbeddedRedis.freePort();
        PackagedService service = PackagedService.launch(Map.of(
                "QUARKUS_REDIS_HOSTS", redisUrl,
                "QUARKUS_HTTP_PORT", Integer.toString(port),
                "QUARKUS_MANAGEMENT_PORT", Integer.toString(EmbeddedRedis.freePort()),
                "BATON_AUTH_API_KEYS", "team-a:" + dev.baton.security.ApiKeys.sha256("it-key-a")));
        try {
            long started = System.nanoTime();
            service.awaitListening();
            String base = "http://127.0.0.1:" + port + "/v1/locks/quiet-" + System.nanoTime();
            String token = given().auth().oauth2("it-key-a").contentType(ContentType.JSON).body("{\"requestId\":\"a\"}")
                    .post(base + "/acquire").then().statusCode(200).extract().path("token");
            given().auth().oauth2("it-key-a").contentType(ContentType.JSON).body("{\"requestId\":\"b\"}")
                    .post(base + "/acquire").then().statusCode(202);
            given().auth().oauth2("it-key-a").contentType(ContentType.JSON)
                    .body("{\"token\":\"" + token + "\",\"requestId\":\"a\"}").post(base + "/complete")
                    .then().statusCode(200);
            given().auth().oauth2("it-key-a").contentType(ContentType.JSON).post("http://127.0.0.1:" + port + "/v1/claims")
                    .then().statusCode(204);
            // The claim-index sweep runs 15 s after start; a WARN once came from the metrics it touched.
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            Thread.sleep(Math.max(0, 20_000 - waited));

            String output = service.output();
            assertThat(output).contains("Listening on");
            assertThat(output.lines().filter(line -> line.matches(".*\\b(WARN|ERROR)\\b.*")).toList())
                    .as("warnings and errors in the log:%n%s", output).isEmpty();
        } finally {
            service.process().destroy();
            service.process().waitFor(30, TimeUnit.SECONDS);
            redis.close();
        }
    }

    @Test
    void given_a_loaded_service_when_sigterm_arrives_then_readiness_turns_down_first_calls_finish_and_it_exits()
            throws Exception {
        TestRedis redis = TestRedis.start();
        String redisUrl = redis.url();
        int port = EmbeddedRedis.freePort();
        int management = EmbeddedRedis.freePort();
        PackagedService service = PackagedService.launch(Map.of(
                "QUARKUS_REDIS_HOSTS", redisUrl,
                "QUARKUS_HTTP_PORT", Integer.toString(port),
                "QUARKUS_MANAGEMENT_PORT", Integer.toString(management),
                "QUARKUS_SHUTDOWN_DELAY", "3s",
                "BATON_AUTH_ENABLED", "false"));
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        URI ready = URI.create("http://127.0.0.1:" + management + "/q/health/ready");
        URI acquire = URI.create("http://127.0.0.1:" + port + "/v1/locks/shutdown-" + System.nanoTime() + "/acquire");
        try {
            service.awaitListening();
            assertThat(status(http, ready)).isEqualTo(200);

            // A client that keeps calling the API through the whole shutdown.
            List<String> answers = new CopyOnWriteArrayList<>();
            AtomicLong lastSuccessNanos = new AtomicLong();
            Thread client = new Thread(() -> {
                for (int i = 0; i < 100_000 && service.process().isAlive(); i++) {
                    try {
                        HttpResponse<String> r = http.send(HttpRequest.newBuilder(acquire)
                                .header("Content-Type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString("{\"requestId\":\"r" + i + "\"}")).build(),
                                HttpResponse.BodyHandlers.ofString());
                        answers.add(Integer.toString(r.statusCode()));
                        lastSuccessNanos.set(System.nanoTime());
                    } catch (IOException refused) {
                        answers.add("closed");
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            client.start();
            Thread.sleep(500);

            long sigterm = System.nanoTime();
            service.process().destroy(); // SIGTERM
            long readyDown = -1;
            while (service.process().isAlive() && readyDown < 0) {
                if (status(http, ready) == 503) {
                    readyDown = System.nanoTime();
                }
                Thread.sleep(20);
            }
            assertThat(service.process().waitFor(60, TimeUnit.SECONDS)).isTrue();
            long exited = System.nanoTime();
            client.join(10_000);

            long readyDownMs = (readyDown - sigterm) / 1_000_000;
            long servedAfterSigtermMs = (lastSuccessNanos.get() - sigterm) / 1_000_000;
            long exitMs = (exited - sigterm) / 1_000_000;
            System.out.printf("graceful shutdown: readiness DOWN %d ms after SIGTERM, API answered until %d ms, "
                    + "exit after %d ms with code %d; %d calls, answers %s%n", readyDownMs, servedAfterSigtermMs,
                    exitMs, service.process().exitValue(), answers.size(),
                    answers.stream().distinct().toList());
            assertThat(readyDown).as("readiness turned DOWN while the process was alive").isPositive();
            assertThat(readyDownMs).isLessThan(1000);
            assertThat(servedAfterSigtermMs).as("calls are still served during the shutdown delay")
                    .isGreaterThan(2000);
            assertThat(answers).as("no call failed with a server error").allMatch(a -> !a.startsWith("5"));
            assertThat(service.process().exitValue()).as("0, or 143: the JVM exit code after SIGTERM").isIn(0, 143);
            assertThat(service.output()).doesNotContain("ERROR");
        } finally {
            service.process().destroyForcibly();
            redis.close();
        }
    }

    private static int status(HttpClient http, URI uri) {
        try {
            return http.send(HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (IOException | InterruptedException e) {
            return -1;
        }
    }
}
