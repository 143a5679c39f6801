package dev.baton.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import dev.baton.lock.ProblemCode;

/**
 * The problem types that openapi.yaml lists (and docs/api-reference.md renders) are the codes the
 * service answers, each with the HTTP status it answers it with.
 */
class ProblemCatalogTest {

    @Test
    void every_problem_code_of_the_service_is_in_the_contract_with_its_status() throws IOException {
        JsonNode spec = new ObjectMapper(new YAMLFactory()).readTree(Path.of("openapi.yaml").toFile());
        Map<String, Integer> documented = new LinkedHashMap<>();
        spec.path("components").path("x-problem-types")
                .forEach(type -> documented.put(type.path("code").asText(), type.path("status").asInt()));
        List<String> enumerated = new ArrayList<>();
        spec.path("components").path("schemas").path("Problem").path("properties").path("code").path("enum")
                .forEach(code -> enumerated.add(code.asText()));

        Map<String, Integer> served = new LinkedHashMap<>();
        for (ProblemCode code : ProblemCode.values()) {
            served.put(code.name(), ProblemType.status(code));
        }

        assertThat(documented).containsExactlyEntriesOf(served);
        assertThat(enumerated).containsExactlyInAnyOrderElementsOf(Arrays.stream(ProblemCode.values()).map(Enum::name).toList());
    }
}
