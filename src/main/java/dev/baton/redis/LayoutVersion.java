package dev.baton.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.logging.Logger;

import dev.baton.config.Tenants;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;

/**
 * Which Redis layout (docs/internals/redis-layout.md) this build reads and writes, and whether
 * the Redis it talks to holds that one. Two layouts on one Redis would mean two locks for one
 * lcid, so each tenant's layout version is stored in Redis ({@link IndexKeys#layout}), written by
 * the first replica that finds no Baton data of the tenant; a replica that finds another version,
 * or data of a release from before versions were stored, refuses readiness and every script call
 * until that changes (docs/operations.md, upgrades). Readiness probes check again each time, so a
 * Redis that lost its data (a restart without persistence) gets its version back.
 */
@ApplicationScoped
public class LayoutVersion {

    /** The layout of this build. Bump it, and mark the release in the CHANGELOG, when a key or field changes. */
    public static final String CURRENT = "2";

    /** How the check names a tenant with data but no stored version: a release from before layout 2. */
    static final String UNVERSIONED = "1 (no version stored, busy or claimable lcids present)";

    private static final Logger LOG = Logger.getLogger(LayoutVersion.class);

    private final SharedConnections redis;
    private final Tenants tenants;
    private volatile boolean verified;
    private volatile String refusal;

    public LayoutVersion(SharedConnections redis, Tenants tenants) {
        this.redis = redis;
        this.tenants = tenants;
    }

    /** Whether the last check found this build's layout for every tenant (the fast path of every call). */
    public boolean verified() {
        return verified;
    }

    /** Why this replica refuses to serve, or null when it does not (or has not checked yet). */
    public String refusal() {
        return refusal;
    }

    /**
     * Checks every tenant (storing this build's version where none is), and fails with
     * {@link LayoutMismatchException} when one holds another layout. Idempotent: concurrent checks
     * (calls that arrive before the first check ended) only repeat the same reads.
     */
    public Uni<Void> check() {
        List<Uni<String>> checks = new ArrayList<>();
        List<String> names = List.copyOf(tenants.all());
        names.forEach(tenant -> checks.add(checkTenant(tenant)));
        if (checks.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return Uni.join().all(checks).andFailFast().map(found -> {
            List<String> wrong = new ArrayList<>();
            for (int i = 0; i < names.size(); i++) {
                if (!CURRENT.equals(found.get(i))) {
                    wrong.add("tenant " + names.get(i) + " is in layout " + found.get(i));
                }
            }
            return wrong.isEmpty() ? null
                    : "Redis holds Baton data in a layout this release does not read (" + String.join(", ", wrong)
                            + "; this release reads and writes layout " + CURRENT + "). This replica stays unready"
                            + " and writes nothing. Upgrade across a layout change with the Recreate strategy or"
                            + " a drain (docs/operations.md, Upgrades)";
        }).invoke(this::settle).map(problem -> {
            if (problem != null) {
                throw new LayoutMismatchException(problem);
            }
            return null;
        });
    }

    private void settle(String problem) {
        if (!Objects.equals(problem, refusal)) {
            if (problem != null) {
                LOG.error(problem);
            } else if (refusal != null) {
                LOG.infof("Redis now holds layout %s for every tenant: serving again", CURRENT);
            }
        }
        refusal = problem;
        verified = problem == null;
    }

    /** The tenant's layout version, storing this build's when the tenant has no Baton data yet. */
    private Uni<String> checkTenant(String tenant) {
        String key = IndexKeys.layout(tenant);
        return get(key).chain(found -> {
            if (found != null) {
                return Uni.createFrom().item(found);
            }
            // Releases before layout 2 stored no version: their busy or claimable lcids show them.
            return count(IndexKeys.busy(tenant)).chain(busy -> count(IndexKeys.claimable(tenant)).map(c -> c + busy))
                    .chain(traces -> traces > 0 ? Uni.createFrom().item(UNVERSIONED)
                            : redis.send(Request.cmd(Command.SET).arg(key).arg(CURRENT).arg("NX"))
                                    .chain(ignored -> get(key)));
        });
    }

    private Uni<String> get(String key) {
        return redis.send(Request.cmd(Command.GET).arg(key)).map(reply -> reply == null ? null : reply.toString());
    }

    private Uni<Long> count(String key) {
        return redis.send(Request.cmd(Command.EXISTS).arg(key)).map(Response::toLong);
    }
}
