package dev.baton.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.baton.redis.LockKeys;
import dev.baton.redis.LuaScript;
import dev.baton.redis.ScriptCall;
import io.vertx.core.Vertx;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;

/**
 * What one acquire -> complete cycle of the Lua scripts costs inside Redis, without any client or
 * network: both scripts, loaded as the service loads them ({@link LuaScript}, includes resolved),
 * run N times in one EVAL on 64 fresh lcids, and the wall time of that EVAL is divided by N.
 * Needs a Redis to spare: it writes bench keys, which expire within a minute.
 *
 * <pre>./mvnw -q test-compile exec:java -Dbench.main=dev.baton.bench.ScriptCost -Dexec.args="--port=6379 --cycles=5000 --runs=6"</pre>
 *
 * {@code --print-script=FILE} only writes that EVAL's script (ARGV: cycles, key prefix) to FILE:
 * {@code bench/script-instructions} runs it on a redis-server under valgrind and counts the
 * instructions per cycle, a figure that, unlike wall time, a noisy shared host does not move.
 */
public final class ScriptCost {

    /** Retentions short enough that the keys written here go away by themselves; the work is the same. */
    private static final long RETENTION_MS = 60_000;

    private ScriptCost() {
    }

    public static void main(String[] args) throws Exception {
        int port = 6379;
        int cycles = 5000;
        int runs = 6;
        for (String arg : args) {
            if (arg.startsWith("--print-script=")) {
                java.nio.file.Files.writeString(java.nio.file.Path.of(arg.substring("--print-script=".length())),
                        cycleScript());
                return;
            }
            String value = arg.substring(arg.indexOf('=') + 1);
            if (arg.startsWith("--port=")) {
                port = Integer.parseInt(value);
            } else if (arg.startsWith("--cycles=")) {
                cycles = Integer.parseInt(value);
            } else if (arg.startsWith("--runs=")) {
                runs = Integer.parseInt(value);
            } else {
                throw new IllegalArgumentException("unknown argument " + arg + " (--port= --cycles= --runs= | --print-script=FILE)");
            }
        }
        Vertx vertx = Vertx.vertx();
        try {
            RedisConnection redis = Redis.createClient(vertx, "redis://127.0.0.1:" + port).connect()
                    .toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
            String source = cycleScript();
            List<Double> figures = new ArrayList<>();
            for (int run = 0; run < runs; run++) {
                String base = "script-cost-" + System.nanoTime() + "-";
                long start = System.nanoTime();
                Response last = redis.send(Request.cmd(Command.EVAL).arg(source).arg(0).arg(cycles).arg(base))
                        .toCompletionStage().toCompletableFuture().get(10, TimeUnit.MINUTES);
                long took = System.nanoTime() - start;
                if (!"RELEASED".equals(String.valueOf(last))) {
                    throw new IllegalStateException("unexpected reply " + last);
                }
                figures.add(took / 1000.0 / cycles);
            }
            figures.sort(Double::compare);
            System.out.printf(java.util.Locale.ROOT,
                    "{\"usPerCycle\": {\"min\": %.1f, \"median\": %.1f, \"max\": %.1f}, \"cycles\": %d, \"runs\": %d}%n",
                    figures.get(0), figures.get(figures.size() / 2), figures.get(figures.size() - 1), cycles, runs);
        } finally {
            vertx.close();
        }
    }

    /** Both scripts as local functions of one EVAL, then the loop that calls them. */
    private static String cycleScript() {
        ScriptCall.Acquire acquire = new ScriptCall.Acquire("RID", "TOKEN", 30_000, null, 1000, 5, RETENTION_MS,
                RETENTION_MS, RETENTION_MS, false, 5_000);
        ScriptCall.Complete complete = new ScriptCall.Complete("TOKEN", "RID", null, RETENTION_MS, RETENTION_MS, false,
                "TOKEN", 5_000);
        String keys = String.join(", ", LockKeys.of("default", "LCID").asList().stream()
                .map(key -> "'" + key.replace("LCID}", "' .. lcid .. '}") + "'").toList());
        return asFunction("ACQUIRE", LuaScript.ACQUIRE) + asFunction("COMPLETE", LuaScript.COMPLETE) + """
                local n, base, last = tonumber(ARGV[1]), ARGV[2], nil
                for i = 1, n do
                  local lcid = base .. (i %% 64)
                  local k = { %s }
                  ACQUIRE(k, { %s })
                  last = COMPLETE(k, { %s })[1]
                end
                return last
                """.formatted(keys, luaArgs(acquire), luaArgs(complete));
    }

    /** KEYS and ARGV are read-only globals inside EVAL: the script gets them as parameters instead. */
    private static String asFunction(String name, LuaScript script) {
        String body = script.source().replaceAll("\\bKEYS\\b", "K_").replaceAll("\\bARGV\\b", "A_");
        return "local function " + name + "(K_, A_)\n" + body + "\nend\n";
    }

    /** The call's ARGV as a Lua table, with the request and token of cycle i. */
    private static String luaArgs(ScriptCall call) {
        return String.join(", ", call.argv().stream().map(arg -> switch (arg) {
            case "RID" -> "'r' .. i";
            case "TOKEN" -> "'tok' .. i";
            default -> "'" + arg + "'";
        }).toList());
    }
}
