package dev.baton.api;

import java.util.List;

import dev.baton.lock.DeadLetter;

/** Answer of GET /v1/dead-letters: newest first. */
public record DeadLetterList(List<DeadLetter> items, int count) {

    static DeadLetterList of(List<DeadLetter> items) {
        return new DeadLetterList(items, items.size());
    }
}
