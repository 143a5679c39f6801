package dev.baton.client;

/**
 * What a lock call answered. Branch on the type (or {@link #status()}), never on the HTTP code alone:
 * ACQUIRED and NEXT are both 200.
 *
 * <pre>{@code
 * switch (outcome) { ... }  // or: if (outcome instanceof Acquired a) { ... }
 * }</pre>
 */
public sealed interface Outcome permits Acquired, Queued, Next, Released {
    /** {@code ACQUIRED}, {@code QUEUED}, {@code NEXT} or {@code RELEASED}. */
    String status();

    /** The lcid the outcome is about. */
    String lcid();
}
