package dev.baton.ops;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.baton.testing.Contract;
import dev.baton.testing.RedisTestResource;
import io.restassured.http.ContentType;

/** The packaged service, started as an operator would: prod profile, configured by environment. */
class ProdProfileIT {

    private static final Path JAR = Path.of("target", "quarkus-app", "quarkus-run.jar");

    @Test
    void given_the_prod_profile_and_no_quarkus_redis_hosts_when_started_then_it_exits_with_a_clear_message()
            throws Exception {
        Launched service = launch(Map.of());

        boolean exited = service.process.waitFor(60, TimeUnit.SECONDS);
        String output = service.output();
        if (!exited) {
            service.process.destroyForcibly();
        }

        assertThat(exited).as("the service should refuse to start, output:%n%s", output).isTrue();
        assertThat(service.process.exitValue()).isNotZero();
        assertThat(output).contains("Baton needs Redis or Valkey: set QUARKUS_REDIS_HOSTS");
    }

    @Test
    void given_baton_settings_in_environment_variables_when_started_then_they_apply() throws Exception {
        EmbeddedRedis embedded = RedisTestResource.externalUrl() == null ? EmbeddedRedis.start() : null;
        String redisUrl = embedded == null ? RedisTestResource.externalUrl() : embedded.url();
        int port = EmbeddedRedis.freePort();
        Launched service = launch(Map.of(
                "QUARKUS_REDIS_HOSTS", redisUrl,
                "QUARKUS_HTTP_PORT", Integer.toString(port),
                "BATON_LEASE_DEFAULT_MS", "12345",
                "BATON_QUEUE_MAX_LENGTH", "1",
                "BATON_QUEUE_RETRY_AFTER_SECONDS", "7"));
        try {
            awaitListening(service);
            String base = "http://127.0.0.1:" + port + "/v1/locks/env-" + System.nanoTime() + "/acquire";

            given().filter(Contract.FILTER).contentType(ContentType.JSON).body("{\"requestId\":\"a\"}").post(base)
                    .then().statusCode(200).body("leaseMs", equalTo(12345));
            given().filter(Contract.FILTER).contentType(ContentType.JSON).body("{\"requestId\":\"b\"}").post(base)
                    .then().statusCode(202);
            given().filter(Contract.FILTER).contentType(ContentType.JSON).body("{\"requestId\":\"c\"}").post(base)
                    .then().statusCode(429).header("Retry-After", "7").body("code", equalTo("QUEUE_FULL"));
        } finally {
            service.process.destroy();
            service.process.waitFor(30, TimeUnit.SECONDS);
            if (embedded != null) {
                embedded.stop();
            }
        }
    }

    private record Launched(Process process, File log) {
        String output() throws IOException {
            return Files.readString(log.toPath(), StandardCharsets.UTF_8);
        }
    }

    private static Launched launch(Map<String, String> env) throws IOException {
        assertThat(JAR).exists();
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        File log = File.createTempFile("baton-prod", ".log");
        ProcessBuilder builder = new ProcessBuilder(javaBin, "-jar", JAR.toString())
                .redirectErrorStream(true)
                .redirectOutput(log);
        builder.environment().keySet().removeIf(name -> name.startsWith("QUARKUS_") || name.startsWith("BATON_"));
        builder.environment().putIfAbsent("QUARKUS_HTTP_PORT", "0");
        builder.environment().putAll(env);
        return new Launched(builder.start(), log);
    }

    private static void awaitListening(Launched service) throws Exception {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
        while (Instant.now().isBefore(deadline)) {
            if (service.output().contains("Listening on")) {
                return;
            }
            assertThat(service.process.isAlive()).as("service died:%n%s", service.output()).isTrue();
            Thread.sleep(200);
        }
        throw new AssertionError("service did not start:\n" + service.output());
    }
}
