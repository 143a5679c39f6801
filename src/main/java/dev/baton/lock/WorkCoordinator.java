package dev.baton.lock;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import jakarta.enterprise.context.ApplicationScoped;

import dev.baton.config.BatonConfig;
import dev.baton.lock.LockEvents.Operation;
import dev.baton.redis.IndexStore;
import dev.baton.redis.ScriptCall;
import io.smallrye.mutiny.Uni;

/**
 * Work across the lcids of a tenant: orphan rescue (claims) and the dead letters. Both walk a
 * best-effort index and check every entry against the lcid's own keys.
 */
@ApplicationScoped
public class WorkCoordinator {

    /** How many busy lcids a listing by queue length reads at most to rank them. */
    public static final int QUEUE_RANKING_BOUND = 1000;

    private final LcidScripts scripts;
    private final TokenGenerator tokens;
    private final BatonConfig config;
    private final IndexStore index;

    WorkCoordinator(LcidScripts scripts, TokenGenerator tokens, BatonConfig config, IndexStore index) {
        this.scripts = scripts;
        this.tokens = tokens;
        this.config = config;
        this.index = index;
    }

    /**
     * Orphaned work of an lcid of the tenant (one that starts with {@code prefix}, unless null):
     * the lock of an lcid whose requests wait with no live holder, as NEXT with up to {@code take}
     * of them, or nothing. Stale index entries are re-scored or dropped on the way.
     */
    public Uni<Optional<Outcome>> claim(String tenant, long leaseMs, int take, String prefix) {
        int candidates = config.claims().candidates();
        return (prefix == null ? index.dueClaims(tenant, candidates)
                : index.dueClaims(tenant, candidates, prefix, config.claims().prefixScan()))
                .chain(due -> claimFirst(tenant, due, 0, leaseMs, take));
    }

    private Uni<Optional<Outcome>> claimFirst(String tenant, List<IndexStore.Entry> candidates, int i, long leaseMs,
            int take) {
        if (i >= candidates.size()) {
            return Uni.createFrom().item(Optional.empty());
        }
        IndexStore.Entry candidate = candidates.get(i);
        String lcid = candidate.member();
        return scripts.run(Operation.CLAIM, true, tenant, lcid, null, new ScriptCall.Claim(tokens.newToken(), leaseMs,
                config.maxAttempts(), Retention.idle(config), Retention.dead(config), Retention.result(config),
                config.waiting().pickupMs(), take), reply -> ScriptReplies.claim(lcid, reply))
                .chain(answer -> {
                    if (answer instanceof ClaimAnswer.Claimed claimed) {
                        return Uni.createFrom().item(Optional.<Outcome>of(claimed.next()));
                    }
                    return tidy(tenant, candidate, answer).chain(() -> claimFirst(tenant, candidates, i + 1, leaseMs, take));
                });
    }

    /** Looks at due claim-index entries without taking work: keeps the index small and current. */
    public Uni<Integer> sweep(String tenant, int limit) {
        return index.dueClaims(tenant, limit).chain(entries -> {
            List<Uni<Void>> checks = new ArrayList<>();
            for (IndexStore.Entry entry : entries) {
                checks.add(scripts.peek(tenant, entry.member(), new ScriptCall.ClaimInspect())
                        .map(reply -> ScriptReplies.claim(entry.member(), reply))
                        .chain(answer -> tidy(tenant, entry, answer)));
            }
            return checks.isEmpty() ? Uni.createFrom().item(0)
                    : Uni.join().all(checks).andCollectFailures().map(done -> entries.size());
        }).call(() -> index.dropDeadOlderThan(tenant, config.deadRetention().toMillis()));
    }

    private Uni<Void> tidy(String tenant, IndexStore.Entry entry, ClaimAnswer answer) {
        if (answer instanceof ClaimAnswer.Busy busy) {
            return index.setClaimHints(tenant, List.of(new IndexStore.ClaimHint(entry.member(), busy.leaseEndsAt(),
                    busy.indexVersion())));
        }
        if (answer instanceof ClaimAnswer.Idle idle) {
            return index.dropClaim(tenant, entry.member(), idle.indexVersion());
        }
        return Uni.createFrom().voidItem();
    }

    /**
     * A page of the tenant's busy lcids, each read now through its lock view; entries of the busy
     * index that turn out idle are dropped from it and from the page (a page may come out short).
     * By queue length, the {@link #QUEUE_RANKING_BOUND} longest-held busy lcids are read and
     * ranked: the index is ordered by holder age only, and a bound keeps one listing's cost on
     * Redis fixed whatever the number of busy lcids.
     */
    public Uni<BusyLocks> busyLocks(String tenant, BusyOrder order, int offset, int limit) {
        Uni<List<IndexStore.Entry>> entries = order == BusyOrder.HELD ? index.busy(tenant, offset, limit)
                : index.busy(tenant, 0, QUEUE_RANKING_BOUND);
        return Uni.combine().all().unis(entries.chain(page -> busyViews(tenant, page)), index.busyCount(tenant))
                .asTuple().map(read -> {
                    List<LockView> views = read.getItem1();
                    if (order == BusyOrder.HELD) {
                        return new BusyLocks(order, offset, read.getItem2(), null, views);
                    }
                    List<LockView> ranked = views.stream()
                            .sorted(Comparator.comparingInt(LockView::queueLength).reversed()).toList();
                    return new BusyLocks(order, offset, read.getItem2(), views.size(),
                            ranked.subList(Math.min(offset, ranked.size()), Math.min(offset + limit, ranked.size())));
                });
    }

    private Uni<List<LockView>> busyViews(String tenant, List<IndexStore.Entry> entries) {
        if (entries.isEmpty()) {
            return Uni.createFrom().item(List.of());
        }
        List<Uni<LockView>> reads = new ArrayList<>();
        for (IndexStore.Entry entry : entries) {
            reads.add(scripts.peek(tenant, entry.member(), new ScriptCall.ViewLock())
                    .map(reply -> ScriptReplies.lockView(entry.member(), reply))
                    .call(view -> busy(view) ? Uni.createFrom().voidItem() : index.dropBusyIfUnchanged(tenant, entry)));
        }
        return Uni.join().all(reads).andFailFast().map(views -> views.stream().filter(WorkCoordinator::busy).toList());
    }

    private static boolean busy(LockView view) {
        return view.held() || view.queueLength() > 0;
    }

    /** The tenant's newest DEAD requests, each checked against its lcid; stale entries are dropped. */
    public Uni<List<DeadLetter>> deadLetters(String tenant, int limit) {
        return index.newestDead(tenant, limit).chain(entries -> {
            if (entries.isEmpty()) {
                return Uni.createFrom().item(List.<DeadLetter>of());
            }
            List<Uni<DeadLetter>> reads = new ArrayList<>();
            for (IndexStore.DeadEntry entry : entries) {
                reads.add(scripts.peek(tenant, entry.lcid(), new ScriptCall.ViewDead(entry.requestId()))
                        .map(reply -> ScriptReplies.deadLetter(entry, reply))
                        .call(letter -> letter == null ? index.removeDeadIfUnchanged(tenant, entry)
                                : Uni.createFrom().voidItem()));
            }
            return Uni.join().all(reads).andFailFast()
                    .map(letters -> letters.stream().filter(Objects::nonNull).toList());
        });
    }
}
