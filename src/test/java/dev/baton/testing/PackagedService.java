package dev.baton.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * The packaged service (target/quarkus-app, built by the package phase before the ITs) started
 * as an operator would: its own process, prod profile, configured by environment variables only.
 */
public record PackagedService(Process process, File log) {

    private static final Path JAR = Path.of("target", "quarkus-app", "quarkus-run.jar");

    /** Starts it with only these QUARKUS_ and BATON_ variables (the HTTP port is 0 unless given). */
    public static PackagedService launch(Map<String, String> env) throws IOException {
        assertThat(JAR).exists();
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        File log = File.createTempFile("baton-prod", ".log");
        ProcessBuilder builder = new ProcessBuilder(javaBin, "-jar", JAR.toString())
                .redirectErrorStream(true)
                .redirectOutput(log);
        builder.environment().keySet().removeIf(name -> name.startsWith("QUARKUS_") || name.startsWith("BATON_"));
        builder.environment().putIfAbsent("QUARKUS_HTTP_PORT", "0");
        builder.environment().putAll(env);
        return new PackagedService(builder.start(), log);
    }

    public String output() throws IOException {
        return Files.readString(log.toPath(), StandardCharsets.UTF_8);
    }

    /** Until it logs that it listens; fails with its output when it dies or takes over a minute. */
    public PackagedService awaitListening() throws Exception {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
        while (Instant.now().isBefore(deadline)) {
            if (output().contains("Listening on")) {
                return this;
            }
            assertThat(process.isAlive()).as("service died:%n%s", output()).isTrue();
            Thread.sleep(200);
        }
        throw new AssertionError("service did not start:\n" + output());
    }
}
