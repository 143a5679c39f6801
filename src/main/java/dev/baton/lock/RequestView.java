package dev.baton.lock;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;

/**
 * Where one request stands. {@code position} only while QUEUED, {@code fence} once it was granted,
 * the trace context when it was submitted with one.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RequestView(String lcid, String requestId, RequestState state, Integer position, int attempt,
        Long fence, @JsonRawValue String result, String reason, String traceparent, String tracestate) {
}
