package dev.baton.api;

import jakarta.inject.Singleton;

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
        mapper.enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        mapper.disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT);
        mapper.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        mapper.enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);
        mapper.coercionConfigFor(LogicalType.Textual)
                .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
        mapper.coercionConfigFor(LogicalType.Integer)
                .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Float, CoercionAction.Fail);
        mapper.coercionConfigFor(LogicalType.Boolean)
                .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail);
    }
}
