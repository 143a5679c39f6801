package dev.baton.ops;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * One version for the product, set in pom.xml and copied by .ci/sync-version: what the running
 * service says (/q/info), what the contract says (openapi.yaml), what each client package says, and
 * the CHANGELOG. A release names its own section; a -SNAPSHOT build is "Unreleased", newer than the
 * last release.
 */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class ProductVersionTest {

    @TestHTTPResource(value = "/info", management = true)
    URL infoUrl;

    @Test
    void the_running_service_the_contract_the_clients_and_the_changelog_name_the_version_of_the_build()
            throws IOException {
        String pom = first(read("pom.xml"), "<artifactId>baton</artifactId>\\s*<version>([^<]+)</version>");

        String served = given().get(infoUrl).then().statusCode(200).extract().path("build.version");
        assertThat(served).isEqualTo(pom);
        assertThat(first(read("openapi.yaml"), "(?m)^  version: \"([^\"]+)\"")).as("openapi.yaml").isEqualTo(pom);

        String python = pom.replaceFirst("-SNAPSHOT$", ".dev0"); // PEP 440
        assertThat(first(read("clients/python/pyproject.toml"), "(?m)^version = \"([^\"]+)\"")).isEqualTo(python);
        assertThat(first(read("clients/python/baton/_version.py"), "(?m)^__version__ = \"([^\"]+)\"")).isEqualTo(python);
        assertThat(first(read("clients/typescript/package.json"), "\"version\": \"([^\"]+)\"")).isEqualTo(pom);
        assertThat(first(read("clients/typescript/package-lock.json"), "\"version\": \"([^\"]+)\"")).isEqualTo(pom);
        assertThat(first(read("clients/typescript/src/calls.ts"), "export const VERSION = '([^']+)'")).isEqualTo(pom);
        assertThat(first(read("clients/go/http.go"), "const Version = \"([^\"]+)\"")).isEqualTo(pom);
        assertThat(first(read("clients/java/pom.xml"), "<artifactId>baton-client</artifactId>\\s*<version>([^<]+)</version>"))
                .isEqualTo(pom);
        assertThat(first(read("clients/java/src/main/java/dev/baton/client/Version.java"),
                "CLIENT = \"([^\"]+)\"")).isEqualTo(pom);

        String changelog = read("CHANGELOG.md");
        String released = first(changelog, "(?m)^## \\[(\\d+\\.\\d+\\.\\d+)\\]");
        if (pom.endsWith("-SNAPSHOT")) {
            String next = pom.substring(0, pom.length() - "-SNAPSHOT".length());
            assertThat(first(changelog, "(?m)^## \\[([^\\]]+)\\]")).as("first CHANGELOG section").isEqualTo("Unreleased");
            assertThat(changelog).as("the Unreleased section names the snapshot").contains("Version " + pom);
            assertThat(compare(next, released)).as("%s is newer than the last release %s", next, released).isPositive();
        } else {
            assertThat(released).isEqualTo(pom);
        }
    }

    private static String read(String path) throws IOException {
        return Files.readString(Path.of(path));
    }

    private static int compare(String a, String b) {
        String[] x = a.split("\\.");
        String[] y = b.split("\\.");
        for (int i = 0; i < 3; i++) {
            int c = Integer.compare(Integer.parseInt(x[i]), Integer.parseInt(y[i]));
            if (c != 0) {
                return c;
            }
        }
        return 0;
    }

    private static String first(String text, String regex) {
        Matcher matcher = Pattern.compile(regex).matcher(text);
        assertThat(matcher.find()).as("%s found", regex).isTrue();
        return matcher.group(1);
    }
}
