package dev.baton.lock;

import java.time.Instant;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;

/**
 * What a lock operation tells the caller to do next. These records are also the response bodies:
 * the {@code status} property names the outcome.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "status")
@JsonSubTypes({
        @JsonSubTypes.Type(value = Outcome.Acquired.class, name = "ACQUIRED"),
        @JsonSubTypes.Type(value = Outcome.Queued.class, name = "QUEUED"),
        @JsonSubTypes.Type(value = Outcome.Next.class, name = "NEXT"),
        @JsonSubTypes.Type(value = Outcome.Released.class, name = "RELEASED")
})
@JsonInclude(JsonInclude.Include.NON_NULL)
public sealed interface Outcome {

    /** HTTP status of the outcome: 202 for QUEUED, 200 otherwise. */
    default int httpStatus() {
        return 200;
    }

    /**
     * You hold the lock; work on your own request. {@code attempt}: which attempt of the request
     * this is (more than 1: a wait request's turn that is redone); {@code traceparent},
     * {@code tracestate}: the trace context it was submitted with, if any. None of the three is on
     * a heartbeat's answer, which is about the lease only.
     */
    record Acquired(String lcid, String requestId, String token, long fence, long leaseMs, Instant expiresAt,
            Integer attempt, String traceparent, String tracestate) implements Outcome {

        public Acquired(String lcid, String requestId, String token, long fence, long leaseMs, Instant expiresAt) {
            this(lcid, requestId, token, fence, leaseMs, expiresAt, null, null, null);
        }
    }

    /** The lock is busy; your request waits at {@code position} (1 = next) and the holder will run it. */
    record Queued(String lcid, String requestId, int position, int queueLength) implements Outcome {
        @Override
        public int httpStatus() {
            return 202;
        }
    }

    /**
     * You hold the lock; work on {@code request}, then complete it. {@code requests}: every request
     * handed over under this fence, {@code request} first (one unless the caller sent take &gt; 1);
     * a batch of more than one is completed as a whole.
     */
    record Next(String lcid, String token, long fence, long leaseMs, Instant expiresAt, WorkItem request,
            List<WorkItem> requests) implements Outcome {
    }

    /**
     * Nothing more for you: the lock is free, or it was passed to the wait request
     * {@code passedTo} (its turn), or your request left the queue.
     */
    record Released(String lcid, Integer pending, String passedTo) implements Outcome {

        public Released(String lcid, Integer pending) {
            this(lcid, pending, null);
        }
    }

    /**
     * The request a NEXT holder works on, with the trace context it was submitted with, if any:
     * the holder's work span links to it.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record WorkItem(String requestId, @JsonRawValue String payload, int attempt, String traceparent,
            String tracestate) {
    }
}
