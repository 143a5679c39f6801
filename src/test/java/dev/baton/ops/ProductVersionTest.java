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
 * One version for the product: what the build says (pom.xml), what the running service says
 * (/q/info), what the contract says (openapi.yaml) and the newest release in CHANGELOG.md.
 */
@QuarkusTest
@WithTestResource(RedisTestResource.class)
class ProductVersionTest {

    @TestHTTPResource(value = "/info", management = true)
    URL infoUrl;

    @Test
    void the_running_service_the_contract_and_the_changelog_name_the_version_of_the_build() throws IOException {
        String pom = first(Files.readString(Path.of("pom.xml")),
                "<artifactId>baton</artifactId>\\s*<version>([^<]+)</version>");

        String served = given().get(infoUrl).then().statusCode(200).extract().path("build.version");
        String contract = first(Files.readString(Path.of("openapi.yaml")), "(?m)^  version: \"([^\"]+)\"");
        String released = first(Files.readString(Path.of("CHANGELOG.md")), "(?m)^## \\[(\\d+\\.\\d+\\.\\d+)\\]");

        assertThat(served).isEqualTo(pom);
        assertThat(contract).isEqualTo(pom);
        assertThat(released).isEqualTo(pom);
    }

    private static String first(String text, String regex) {
        Matcher matcher = Pattern.compile(regex).matcher(text);
        assertThat(matcher.find()).as("%s found", regex).isTrue();
        return matcher.group(1);
    }
}
