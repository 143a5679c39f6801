package dev.baton.docs;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

/**
 * Renders docs/api-reference.md from openapi.yaml: every endpoint with its parameters, body
 * fields (type, rule, default), answers and problems, the answer bodies, and the problem types.
 * The reference is rendered, never written by hand, so it cannot drift from the contract.
 */
final class ApiReference {

    private static final List<String> METHODS = List.of("get", "post", "put", "patch", "delete");

    private final JsonNode spec;
    private final StringBuilder out = new StringBuilder();

    private ApiReference(JsonNode spec) {
        this.spec = spec;
    }

    static String render(Path openapi) throws IOException {
        return new ApiReference(new ObjectMapper(new YAMLFactory()).readTree(openapi.toFile())).render();
    }

    private String render() {
        JsonNode info = spec.path("info");
        line("# API reference");
        line();
        line("<!-- Generated from openapi.yaml by dev.baton.docs.ApiReferenceTest; do not edit. Change openapi.yaml,");
        line("then run: ./mvnw test -Dtest=ApiReferenceTest -Dbaton.docs.write=true -->");
        line();
        line("Baton API version " + info.path("version").asText() + ", license " + info.path("license").path("name").asText()
                + ". Every endpoint, field, answer and problem of [openapi.yaml](../openapi.yaml), the contract (a running"
                + " service serves it at `/q/openapi`). What the calls mean, and what Baton guarantees:"
                + " [protocol.md](protocol.md).");
        line();
        line(info.path("description").asText().strip());
        line();
        line("**Authentication.** " + flat(spec.path("components").path("securitySchemes").path("apiKey")
                .path("description").asText()));
        line();
        line("## Endpoints");
        line();
        line("| method | path | what it does |");
        line("|---|---|---|");
        forEachOperation((method, path, operation) -> line("| " + method.toUpperCase(Locale.ROOT) + " | ["
                + code(path) + "](#" + slug(method.toUpperCase(Locale.ROOT) + " " + path) + ") | "
                + cell(operation.path("summary").asText()) + " |"));
        forEachOperation(this::operation);
        schemas();
        problems();
        return out.toString();
    }

    private interface OperationVisitor {
        void visit(String method, String path, JsonNode operation);
    }

    private void forEachOperation(OperationVisitor visitor) {
        Iterator<Map.Entry<String, JsonNode>> paths = spec.path("paths").fields();
        while (paths.hasNext()) {
            Map.Entry<String, JsonNode> path = paths.next();
            for (String method : METHODS) {
                if (path.getValue().has(method)) {
                    visitor.visit(method, path.getKey(), path.getValue().get(method));
                }
            }
        }
    }

    private void operation(String method, String path, JsonNode operation) {
        line();
        line("## " + method.toUpperCase(Locale.ROOT) + " " + path);
        line();
        line("**" + operation.path("summary").asText() + "** (operation `" + operation.path("operationId").asText() + "`)");
        if (operation.has("description")) {
            line();
            line(operation.get("description").asText().strip());
        }
        List<JsonNode> parameters = new ArrayList<>();
        operation.path("parameters").forEach(parameter -> parameters.add(resolve(parameter)));
        if (!parameters.isEmpty()) {
            line();
            line("| parameter | in | type | required | rule | default | meaning |");
            line("|---|---|---|---|---|---|---|");
            for (JsonNode parameter : parameters) {
                JsonNode schema = schema(parameter.path("schema"));
                line("| `" + parameter.path("name").asText() + "` | " + parameter.path("in").asText() + " | "
                        + type(parameter.path("schema")) + " | " + (parameter.path("required").asBoolean() ? "yes" : "no")
                        + " | " + rule(schema) + " | " + defaultOf(schema) + " | "
                        + cell(text(parameter, "description", schema)) + " |");
            }
        }
        JsonNode body = operation.path("requestBody");
        if (body.isMissingNode() && !method.equals("get")) {
            line();
            line("Body: none (an empty body or `{}` is accepted; any field is 400 `INVALID_REQUEST`).");
        } else if (!body.isMissingNode()) {
            line();
            JsonNode schemaRef = body.path("content").path("application/json").path("schema");
            JsonNode schema = schema(schemaRef);
            line(("Body: `application/json`, " + (body.path("required").asBoolean() ? "required" : "optional")
                    + ", schema " + schemaName(schemaRef) + (schema.path("additionalProperties").isBoolean()
                            && !schema.path("additionalProperties").asBoolean() ? "; no other fields (400)" : "")
                    + ". " + cell(schema.path("description").asText(""))).strip());
            line();
            fields("field", schema, "");
        }
        line();
        line("| answer | meaning | body |");
        line("|---|---|---|");
        Iterator<Map.Entry<String, JsonNode>> responses = operation.path("responses").fields();
        while (responses.hasNext()) {
            Map.Entry<String, JsonNode> response = responses.next();
            JsonNode resolved = resolve(response.getValue());
            JsonNode content = resolved.path("content");
            String bodyOf = "none";
            if (content.fieldNames().hasNext()) {
                String mediaType = content.fieldNames().next();
                bodyOf = "`" + mediaType + "` " + schemaName(content.path(mediaType).path("schema"));
            }
            line("| " + response.getKey() + " | " + cell(resolved.path("description").asText()) + " | " + bodyOf + " |");
        }
    }

    /** One row per field; objects inside arrays get rows of their own ({@code completed[i].requestId}). */
    private void fields(String header, JsonNode schema, String prefix) {
        if (prefix.isEmpty()) {
            line("| " + header + " | type | required | rule | default | meaning |");
            line("|---|---|---|---|---|---|");
        }
        List<String> required = new ArrayList<>();
        schema.path("required").forEach(name -> required.add(name.asText()));
        Iterator<Map.Entry<String, JsonNode>> properties = schema.path("properties").fields();
        while (properties.hasNext()) {
            Map.Entry<String, JsonNode> property = properties.next();
            JsonNode field = schema(property.getValue());
            String name = prefix + property.getKey();
            line("| `" + name + "` | " + type(property.getValue()) + " | " + (required.contains(property.getKey()) ? "yes" : "no")
                    + " | " + rule(field) + " | " + defaultOf(field) + " | "
                    + cell(text(property.getValue(), "description", field)) + " |");
            JsonNode items = schema(field.path("items"));
            if ("array".equals(field.path("type").asText()) && items.has("properties")) {
                fields(header, items, name + "[i].");
            }
        }
    }

    private void schemas() {
        line();
        line("## Answer bodies");
        line();
        line("Answers may gain fields in later versions: ignore fields you do not know.");
        Iterator<Map.Entry<String, JsonNode>> schemas = spec.path("components").path("schemas").fields();
        while (schemas.hasNext()) {
            Map.Entry<String, JsonNode> entry = schemas.next();
            JsonNode schema = entry.getValue();
            if (!schema.has("properties") && !schema.has("oneOf") || isRequestBody(entry.getKey())) {
                continue;
            }
            line();
            line("### " + entry.getKey());
            if (schema.has("description")) {
                line();
                line(flat(schema.get("description").asText()));
            }
            line();
            if (schema.has("oneOf")) {
                line("One of " + oneOf(schema) + ".");
            } else {
                fields("field", schema, "");
            }
        }
    }

    private boolean isRequestBody(String name) {
        boolean[] used = { false };
        forEachOperation((method, path, operation) -> {
            String ref = operation.path("requestBody").path("content").path("application/json").path("schema")
                    .path("$ref").asText("");
            JsonNode schema = spec.path("components").path("schemas").path(name);
            boolean isItem = schema.equals(schema(spec.path("components").path("schemas").path("CompleteRequest")
                    .path("properties").path("completed").path("items")));
            used[0] |= ref.endsWith("/" + name) || isItem;
        });
        return used[0];
    }

    private void problems() {
        line();
        line("## Problem types");
        line();
        line("Every error is `application/problem+json` (RFC 9457): `type` (`urn:baton:problem:<code>`), `title`,"
                + " `status`, `detail`, `instance` (the path), `code`, and where they apply `field`, `state`, `attempt`,"
                + " `result`, `activeRequestIds` (schema [Problem](#problem)). Match on `code`.");
        line();
        line("| code | HTTP | type | when | what to do |");
        line("|---|---|---|---|---|");
        for (JsonNode problem : spec.path("components").path("x-problem-types")) {
            String code = problem.path("code").asText();
            line("| `" + code + "` | " + problem.path("status").asInt() + " | `urn:baton:problem:"
                    + code.toLowerCase(Locale.ROOT).replace('_', '-') + "` | " + cell(problem.path("when").asText()) + " | "
                    + cell(problem.path("then").asText()) + " |");
        }
    }

    // --- schema helpers ---

    private JsonNode resolve(JsonNode node) {
        while (node.has("$ref")) {
            JsonNode target = spec;
            for (String part : node.get("$ref").asText().substring(2).split("/")) {
                target = target.path(part);
            }
            node = target;
        }
        return node;
    }

    /** The schema a property names: its $ref, or the single schema of its allOf, with its own description. */
    private JsonNode schema(JsonNode node) {
        JsonNode resolved = resolve(node);
        if (resolved.has("allOf") && resolved.get("allOf").size() == 1) {
            ObjectNode merged = resolve(resolved.get("allOf").get(0)).deepCopy();
            resolved.fields().forEachRemaining(field -> {
                if (!field.getKey().equals("allOf")) {
                    merged.set(field.getKey(), field.getValue());
                }
            });
            return merged;
        }
        return resolved;
    }

    private String text(JsonNode node, String name, JsonNode resolved) {
        return node.has(name) ? node.get(name).asText() : resolved.path(name).asText("");
    }

    private String schemaName(JsonNode node) {
        String ref = node.path("$ref").asText("");
        if (!ref.isEmpty()) {
            String name = ref.substring(ref.lastIndexOf('/') + 1);
            return isRequestBody(name) ? "`" + name + "`" : "[" + name + "](#" + slug(name) + ")";
        }
        if (node.has("oneOf")) {
            return "one of " + oneOf(node);
        }
        return "`" + node.path("type").asText("any JSON") + "`";
    }

    private String oneOf(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.get("oneOf").forEach(option -> names.add(schemaName(option)));
        String by = node.path("discriminator").path("propertyName").asText("");
        return String.join(", ", names) + (by.isEmpty() ? "" : " (by `" + by + "`)");
    }

    private String type(JsonNode node) {
        JsonNode named = node.has("allOf") && node.get("allOf").size() == 1 ? node.get("allOf").get(0) : node;
        JsonNode schema = schema(node);
        if (named.has("$ref") && schema.has("properties")) {
            return schemaName(named);
        }
        if (schema.has("oneOf")) {
            return "one of " + oneOf(schema);
        }
        String type = schema.path("type").asText("");
        if (type.isEmpty()) {
            return "any JSON";
        }
        if (type.equals("array")) {
            JsonNode items = node.path("items").isMissingNode() ? schema.path("items") : node.path("items");
            String ref = items.path("$ref").asText("");
            String of = !ref.isEmpty() && !isScalar(schema(items)) ? schemaName(items) : type(items);
            return "array of " + of;
        }
        String format = schema.path("format").asText("");
        return format.isEmpty() || format.equals("int64") ? type : type + " (" + format + ")";
    }

    private static boolean isScalar(JsonNode schema) {
        String type = schema.path("type").asText("");
        return type.equals("string") || type.equals("integer") || type.equals("boolean") || type.equals("number");
    }

    private static String rule(JsonNode schema) {
        List<String> rules = new ArrayList<>();
        if (schema.has("enum")) {
            List<String> values = new ArrayList<>();
            schema.get("enum").forEach(value -> values.add("`" + value.asText() + "`"));
            rules.add(String.join(", ", values));
        }
        if (schema.has("pattern")) {
            rules.add("`" + schema.get("pattern").asText() + "`");
        }
        range(rules, schema, "minimum", "maximum", "");
        range(rules, schema, "minLength", "maxLength", " characters");
        range(rules, schema, "minItems", "maxItems", " items");
        return rules.isEmpty() ? "" : cell(String.join("; ", rules));
    }

    private static void range(List<String> rules, JsonNode schema, String min, String max, String unit) {
        if (schema.has(min) && schema.has(max)) {
            rules.add(schema.get(min).asText() + " to " + schema.get(max).asText() + unit);
        } else if (schema.has(min)) {
            rules.add("at least " + schema.get(min).asText() + unit);
        } else if (schema.has(max)) {
            rules.add("at most " + schema.get(max).asText() + unit);
        }
    }

    private static String defaultOf(JsonNode schema) {
        return schema.has("default") ? "`" + schema.get("default").asText() + "`" : "";
    }

    private static String code(String text) {
        return "`" + text + "`";
    }

    private static String flat(String text) {
        return text.strip().replaceAll("\\s*\n\\s*", " ");
    }

    private static String cell(String text) {
        return flat(text).replace("|", "\\|");
    }

    /** GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens. */
    static String slug(String heading) {
        return heading.strip().toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
    }

    private void line(String text) {
        out.append(text).append('\n');
    }

    private void line() {
        out.append('\n');
    }
}
