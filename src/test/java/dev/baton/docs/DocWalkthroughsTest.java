package dev.baton.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * The curl walk-throughs in the docs work as written: every {@code bash} block marked
 * {@code <!-- tested: ... -->} runs with bash and curl against this test instance (the lcids made
 * unique), and each answer it shows as a {@code # {...}} comment must come out, in order, with
 * {@code …} standing for what differs every time (tokens, fences, times).
 */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class DocWalkthroughsTest {

    private static final String MARK = "<!-- tested:";

    @TestHTTPResource("/")
    URL base;

    record Walkthrough(String file, int line, String script) {
        @Override
        public String toString() {
            return file + ":" + line;
        }
    }

    static Stream<Walkthrough> walkthroughs() throws IOException {
        List<Walkthrough> found = new ArrayList<>();
        List<Path> files = new ArrayList<>(List.of(Path.of("README.md")));
        try (Stream<Path> docs = Files.walk(Path.of("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
        }
        for (Path file : files) {
            List<String> lines = Files.readAllLines(file);
            for (int i = 0; i + 1 < lines.size(); i++) {
                if (lines.get(i).startsWith(MARK) && lines.get(i + 1).equals("```bash")) {
                    int end = i + 2;
                    while (!lines.get(end).equals("```")) {
                        end++;
                    }
                    found.add(new Walkthrough(file.toString(), i + 2, String.join("\n", lines.subList(i + 2, end))));
                }
            }
        }
        assertThat(found).as("marked walk-throughs").isNotEmpty();
        return found.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("walkthroughs")
    void the_walkthrough_runs_as_written_and_answers_as_shown(Walkthrough walkthrough) throws Exception {
        String tag = UUID.randomUUID().toString().substring(0, 8);
        String script = walkthrough.script()
                .replace("http://localhost:8080", base.toString().replaceAll("/$", ""))
                .replaceAll("\\b(order-\\d+)\\b", "$1-" + tag);

        Path dir = Files.createTempDirectory("walkthrough");
        Process bash = new ProcessBuilder("bash", "-euo", "pipefail", "-c", script).directory(dir.toFile())
                .redirectErrorStream(true).start();
        boolean ended = bash.waitFor(90, TimeUnit.SECONDS);
        String output = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!ended) {
            bash.destroyForcibly();
        }

        assertThat(ended).as("the walk-through ended within 90 s; it printed:\n%s", output).isTrue();
        assertThat(bash.exitValue()).as("exit status; it printed:\n%s", output).isZero();
        int at = 0;
        for (String line : script.split("\n")) {
            String shown = line.strip();
            if (!shown.startsWith("# {")) {
                continue;
            }
            for (String piece : shown.substring(2).split("…")) {
                int found = output.indexOf(piece, at);
                assertThat(found).as("'%s' (of: %s) comes out after what came before; it printed:\n%s", piece, shown,
                        output).isGreaterThanOrEqualTo(0);
                at = found + piece.length();
            }
        }
    }
}
