package dev.baton.lock;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A page of a tenant's busy lcids (a holder, or queued work) for operators, each as its lock view
 * read now. {@code busyCount}: how many the busy index lists (a hint: it may still hold an lcid
 * that turned idle a moment ago). {@code rankedAmong}: for {@link BusyOrder#QUEUE}, how many of
 * the longest-held busy lcids were read to rank them (all of them, up to a bound).
 */
public record BusyLocks(BusyOrder order, int offset, long busyCount,
        @JsonInclude(JsonInclude.Include.NON_NULL) Integer rankedAmong, List<LockView> items) {
}
