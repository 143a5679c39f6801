package dev.baton.api;

import java.util.ArrayList;
import java.util.List;

import jakarta.inject.Singleton;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.type.LogicalType;

import io.quarkus.jackson.ObjectMapperCustomizer;

/**
 * Clients in other languages must learn about a wrong type instead of having it silently
 * coerced: {@code "leaseMs": 1.5} or {@code "requestId": 7} is a 400, not a guess. A field the
 * operation does not define is a 400 too: in a lock service a dropped field changes the
 * guarantees ({@code "leaseMS": 100}, a typo, would run with the default 30 s lease; a v1.1
 * {@code take} sent to a v1 server would be lost). Hostile bodies (deep nesting, huge numbers or
 * strings) are cut off by the parser's limits.
 */
@Singleton
public class JsonStrictness implements ObjectMapperCustomizer {

    /** Far above what a lock request needs, far below what could hurt the service. */
    static final StreamReadConstraints LIMITS = StreamReadConstraints.builder()
            .maxNestingDepth(64)
            .maxNumberLength(64)
            .maxStringLength(256 * 1024)
            .maxNameLength(1024)
            .build();

    @Override
    public void customize(ObjectMapper mapper) {
        mapper.getFactory().setStreamReadConstraints(LIMITS);
        // A name given twice is refused, not "last one wins": {"requestId":"a","requestId":"b"}
        // would otherwise be taken as b by Baton and as a by another reader of the same bytes.
        mapper.getFactory().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
        mapper.enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        mapper.disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT);
        mapper.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        mapper.enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);
        mapper.coercionConfigFor(LogicalType.Textual)
                .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
        // "" is not a number or a boolean: Jackson would read "leaseMs": "" as absent (the default).
        mapper.coercionConfigFor(LogicalType.Integer)
                .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Float, CoercionAction.Fail);
        mapper.coercionConfigFor(LogicalType.Float)
                .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail);
        mapper.coercionConfigFor(LogicalType.Boolean)
                .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail);
        // Nor is "" an object or a list (a "completed": "" must not read as no list).
        mapper.coercionConfigFor(LogicalType.POJO).setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail);
        mapper.coercionConfigFor(LogicalType.Collection).setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail);
    }

    /**
     * The path of the field a body names twice ({@code requestId}, {@code payload.x},
     * {@code completed[1].result}), or null when the failure is another one.
     */
    static String duplicateField(Throwable failure) {
        for (Throwable cause = failure; cause != null && cause.getCause() != cause; cause = cause.getCause()) {
            if (cause instanceof StreamReadException read && read.getOriginalMessage() != null
                    && read.getOriginalMessage().startsWith("Duplicate field '") && read.getProcessor() != null) {
                return pathOf(read.getProcessor().getParsingContext());
            }
        }
        return null;
    }

    private static String pathOf(JsonStreamContext context) {
        List<String> parts = new ArrayList<>();
        for (JsonStreamContext at = context; at != null && !at.inRoot(); at = at.getParent()) {
            if (at.inObject() && at.getCurrentName() != null) {
                parts.add(0, at.getCurrentName());
            } else if (at.inArray()) {
                parts.add(0, "[" + Math.max(at.getCurrentIndex(), 0) + "]");
            }
        }
        StringBuilder path = new StringBuilder();
        for (String part : parts) {
            if (path.length() > 0 && !part.startsWith("[")) {
                path.append('.');
            }
            path.append(part);
        }
        return path.length() == 0 ? "body" : path.toString();
    }
}
