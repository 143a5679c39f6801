package dev.baton.api;

import java.util.Iterator;

import jakarta.enterprise.context.ApplicationScoped;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.baton.lock.LockProblem;

/**
 * An operation that defines no body accepts none, an empty one or {@code {}}. A field sent there
 * is refused as it is on every other operation, since a caller who sends one expects it to mean
 * something.
 */
@ApplicationScoped
class NoBody {

    private final ObjectMapper mapper;

    NoBody(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    void check(String body) throws JsonProcessingException {
        if (body == null || body.isBlank()) {
            return;
        }
        JsonNode json = mapper.readTree(body);
        if (json == null || json.isNull() || json.isMissingNode()) {
            return;
        }
        if (!json.isObject()) {
            throw LockProblem.invalid("body", "this operation takes no body");
        }
        Iterator<String> names = json.fieldNames();
        if (names.hasNext()) {
            String name = names.next();
            throw LockProblem.invalid(name, "unknown field '" + name + "': this operation takes no body");
        }
    }
}
