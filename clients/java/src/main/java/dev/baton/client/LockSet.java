package dev.baton.client;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The locks {@link BatonClient#lockAll} holds while its handler runs: every lcid's fence, and one
 * cancellation signal for all of them (any lock lost cancels the whole set).
 */
public final class LockSet {
    private final List<Turn> turns;
    private final Map<String, Long> fences;
    private boolean cancelled;
    private final HandlerInterrupt handlerInterrupt = new HandlerInterrupt();

    LockSet(List<Turn> turns) {
        this.turns = List.copyOf(turns);
        Map<String, Long> m = new LinkedHashMap<>();
        for (Turn t : turns) {
            m.put(t.lcid(), t.fence());
        }
        this.fences = Collections.unmodifiableMap(m);
        for (Turn t : turns) {
            t.onCancel(this::lost);
        }
    }

    /** lcid -> fence, in lock order (sorted by UTF-8 bytes). */
    public Map<String, Long> fences() {
        return fences;
    }

    public long fence(String lcid) {
        Long f = fences.get(lcid);
        if (f == null) {
            throw new IllegalArgumentException("not locked here: " + lcid);
        }
        return f;
    }

    /** True once any of the locks is lost; the handler's thread is interrupted at that moment too. */
    public synchronized boolean isCancelled() {
        if (!cancelled) {
            for (Turn t : turns) {
                if (t.isCancelled()) {
                    cancelled = true;
                }
            }
        }
        return cancelled;
    }

    /** Throws {@link LockLostException} when cancelled: call it before each write. */
    public void checkCancelled() {
        for (Turn t : turns) {
            t.checkCancelled();
        }
    }

    private synchronized void lost() {
        cancelled = true;
        handlerInterrupt.fire();
    }

    void enter() {
        handlerInterrupt.enter();
    }

    void exit() {
        handlerInterrupt.exit();
    }
}
