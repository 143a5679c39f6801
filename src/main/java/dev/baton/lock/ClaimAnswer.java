package dev.baton.lock;

/** What the claim script found on one candidate lcid. */
sealed interface ClaimAnswer {

    /** The caller now holds the lcid and works on the request in the body. */
    record Claimed(Outcome.Next next) implements ClaimAnswer {
    }

    /**
     * A live holder has it until {@code leaseEndsAt} (ms, Redis clock): look again then, unless a
     * hint newer than {@code indexVersion} says otherwise.
     */
    record Busy(long leaseEndsAt, long indexVersion) implements ClaimAnswer {
    }

    /** Inspected only: work waits with no live holder. */
    record Claimable() implements ClaimAnswer {
    }

    /** Nothing waits and nobody holds it: not worth indexing, unless a hint newer than {@code indexVersion} came. */
    record Idle(long indexVersion) implements ClaimAnswer {
    }
}
