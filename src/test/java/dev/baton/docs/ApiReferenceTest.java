package dev.baton.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

/**
 * docs/api-reference.md is openapi.yaml rendered: a change of the contract that is not rendered
 * fails the build. {@code -Dbaton.docs.write=true} renders it again.
 */
class ApiReferenceTest {

    private static final Path REFERENCE = Path.of("docs", "api-reference.md");

    @Test
    void the_api_reference_is_the_contract_rendered() throws IOException {
        String rendered = ApiReference.render(Path.of("openapi.yaml"));
        if (Boolean.getBoolean("baton.docs.write")) {
            Files.writeString(REFERENCE, rendered);
        }

        assertThat(Files.exists(REFERENCE)).as("docs/api-reference.md exists").isTrue();
        assertThat(Files.readString(REFERENCE))
                .as("docs/api-reference.md matches openapi.yaml; render it again with"
                        + " ./mvnw test -Dtest=ApiReferenceTest -Dbaton.docs.write=true")
                .isEqualTo(rendered);
    }
}
