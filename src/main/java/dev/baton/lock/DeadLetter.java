package dev.baton.lock;

import java.time.Instant;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;

/** A request that used up its attempts, as the dead-letter listing shows it. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record DeadLetter(String lcid, String requestId, int attempts, String reason, @JsonRawValue String payload,
        Instant diedAt) {
}
