package dev.baton.client;

/**
 * The work done while holding every lock of {@link BatonClient#lockAll}. On the loss of any of the locks
 * the calling thread is interrupted and {@link LockSet#isCancelled()} turns true.
 */
@FunctionalInterface
public interface LockAllHandler<T> {
    T handle(LockSet locks) throws Exception;
}
