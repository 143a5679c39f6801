package dev.baton.api;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;

/**
 * RFC 9457 problem details with Baton's extensions: {@code code} (stable, machine-readable),
 * {@code field} for bad input, and {@code state}/{@code attempt}/{@code result} when the problem
 * is about an existing request, {@code activeRequestIds} when a complete named other requests
 * than the active batch (BATCH_MISMATCH).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ProblemBody(String type, String title, int status, String detail, String instance, String code,
        String field, String state, Integer attempt, @JsonRawValue String result, List<String> activeRequestIds) {

    /** Without a batch to name. */
    public ProblemBody(String type, String title, int status, String detail, String instance, String code,
            String field, String state, Integer attempt, String result) {
        this(type, title, status, detail, instance, code, field, state, attempt, result, null);
    }
}
