package dev.baton.client;

import java.util.List;

/**
 * What {@link BatonClient#run} did.
 *
 * @param status   QUEUED (another holder does the request; this call handled nothing) or RELEASED
 * @param position while QUEUED, the request's position (1 = next); else null
 * @param handled  the requestIds this call handled (and completed), in order
 */
public record RunReport(String lcid, String status, Integer position, List<String> handled) {
    public RunReport {
        handled = List.copyOf(handled);
    }
}
