package dev.baton.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import dev.baton.testing.AuthEnabledProfile;
import dev.baton.testing.RedisTestResource;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * 6,000 malformed requests from a seeded generator: broken JSON, wrong types, huge numbers,
 * control and non-ASCII characters, {@code ..}, {@code %00}, braces, overlong values, deep
 * nesting, oversized bodies, wrong methods, content types and credentials. Every one must get a
 * 4xx problem+json without a stack trace, and none may leave anything in Redis.
 */
@QuarkusTest
@TestProfile(AuthEnabledProfile.class)
@WithTestResource(RedisTestResource.class)
class HostileInputTest {

    private static final int REQUESTS = 6000;
    private static final long SEED = 20261202L;

    @TestHTTPResource("/")
    URI base;

    @Inject
    RedisDataSource redis;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    record Attack(String kind, String method, String path, String contentType, byte[] body, String authorization) {
    }

    @Test
    void given_6000_malformed_requests_then_each_is_a_4xx_problem_and_redis_is_untouched() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(RedisTestResource.clusterMode(), "KEYS sees one node only");
        Set<String> keysBefore = Set.copyOf(redis.key().keys("*"));
        Random random = new Random(SEED);
        List<Attack> attacks = new ArrayList<>();
        for (int i = 0; i < REQUESTS; i++) {
            attacks.add(attack(random, i));
        }

        Map<String, AtomicInteger> byKind = new ConcurrentHashMap<>();
        Map<Integer, AtomicInteger> byStatus = new ConcurrentHashMap<>();
        List<String> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<?>> runs = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int offset = t;
            runs.add(pool.submit(() -> {
                for (int i = offset; i < attacks.size(); i += 4) {
                    Attack attack = attacks.get(i);
                    HttpResponse<String> response;
                    try {
                        response = send(attack);
                    } catch (java.io.IOException e) {
                        failures.add(attack.kind() + " " + attack.method() + " " + attack.path() + " -> no answer: " + e);
                        continue;
                    }
                    byKind.computeIfAbsent(attack.kind(), k -> new AtomicInteger()).incrementAndGet();
                    byStatus.computeIfAbsent(response.statusCode(), k -> new AtomicInteger()).incrementAndGet();
                    String problem = judge(response);
                    if (problem != null && failures.size() < 40) {
                        failures.add(attack.kind() + " " + attack.method() + " " + attack.path() + " -> "
                                + response.statusCode() + " " + problem + ": "
                                + response.body().substring(0, Math.min(200, response.body().length())));
                    }
                }
                return null;
            }));
        }
        for (Future<?> run : runs) {
            run.get();
        }
        pool.shutdown();
        System.out.printf("hostile input: %d requests, by kind %s, by status %s%n", attacks.size(),
                new TreeMap<>(byKind), new TreeMap<>(byStatus));

        assertThat(failures).as("responses that were not a clean 4xx problem").isEmpty();
        Set<String> newKeys = new java.util.HashSet<>(redis.key().keys("*"));
        newKeys.removeAll(keysBefore);
        assertThat(newKeys).as("state left in Redis by malformed requests").isEmpty();
    }

    private static String judge(HttpResponse<String> response) {
        int status = response.statusCode();
        if (status < 400 || status >= 500) {
            return "not a 4xx";
        }
        String type = response.headers().firstValue("Content-Type").orElse("");
        if (!type.startsWith("application/problem+json")) {
            return "not problem+json (" + type + ")";
        }
        String body = response.body();
        if (body.contains("\tat ") || body.contains("at dev.baton") || body.contains("at io.") || body.contains("Exception")) {
            return "stack trace or exception in body";
        }
        if (!body.contains("\"code\"")) {
            return "no code";
        }
        return null;
    }

    private HttpResponse<String> send(Attack attack) throws Exception {
        HttpRequest.BodyPublisher body = attack.body() == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofByteArray(attack.body());
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base.toString().replaceAll("/$", "")
                + attack.path())).timeout(Duration.ofSeconds(10)).method(attack.method(), body);
        if (attack.contentType() != null) {
            request.header("Content-Type", attack.contentType());
        }
        if (attack.authorization() != null) {
            request.header("Authorization", attack.authorization());
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    // ---- the generator ------------------------------------------------------------------------

    private static final String[] OPERATIONS = { "acquire", "heartbeat", "complete", "abort" };
    private static final String[] BAD_LCIDS = { "..", "%2e%2e", "a%00b", "%00", "%7B", "a%7Bb%7D", "a%20b",
            "%C3%A9t%C3%A9", "%E2%80%AE", "a%0Ab", "a%09b", "x%22y", "a%5Cb", "%25", "semi%3Bcolon",
            "l".repeat(201), "a%7Cb", "%F0%9F%94%92" };
    private static final String[] JUNK_VALUES = { "7", "-1", "1e999999", "99999999999999999999999999999", "1.5",
            "true", "null", "[]", "{}", "\"\"", "\"\\u0000\"", "\"a b\"", "\"..\"", "\"%00\"", "\"{\"",
            "\"\\u202e\"", "\"é\"", "\"" + "r".repeat(300) + "\"", "[1,2]", "{\"$gt\":\"\"}", "0x10", "NaN",
            "\"\\ud800\"" };

    private static Attack attack(Random random, int i) {
        String lcid = "fuzz-" + i;
        String op = OPERATIONS[random.nextInt(OPERATIONS.length)];
        String path = "/v1/locks/" + lcid + "/" + op;
        String json = "application/json";
        String key = "Bearer " + AuthEnabledProfile.KEY_A;
        switch (random.nextInt(12)) {
            case 0: { // broken JSON: a valid body cut short, or junk bytes
                String valid = "{\"requestId\":\"r-" + i + "\",\"token\":\"t\",\"leaseMs\":1000}";
                String cut = valid.substring(0, 1 + random.nextInt(valid.length() - 1));
                return new Attack("broken-json", "POST", path, json, bytes(cut), key);
            }
            case 1: { // random bytes, including control characters and invalid UTF-8
                byte[] junk = new byte[1 + random.nextInt(200)];
                random.nextBytes(junk);
                junk[0] = '{';
                return new Attack("junk-bytes", "POST", path, json, junk, key);
            }
            case 2: { // wrong types or forms for every field
                String field = new String[] { "requestId", "token", "leaseMs", "requeue", "reason", "payload" }
                        [random.nextInt(6)];
                String value = JUNK_VALUES[random.nextInt(JUNK_VALUES.length)];
                String body = "{\"" + field + "\":" + value + "}"; // and the other required fields missing
                return new Attack("wrong-type", "POST", path, json, bytes(body), key);
            }
            case 3: // a hostile lcid in the path
                return new Attack("bad-lcid", "POST", "/v1/locks/" + BAD_LCIDS[random.nextInt(BAD_LCIDS.length)]
                        + "/" + op, json, bytes("{\"requestId\":\"r\",\"token\":\"t\"}"), key);
            case 4: { // deep nesting and huge numbers
                int depth = 65 + random.nextInt(2000);
                String body = random.nextBoolean()
                        ? "{\"requestId\":\"r\",\"payload\":" + "[".repeat(depth) + "]".repeat(depth) + "}"
                        : "{\"requestId\":\"r\",\"leaseMs\":" + "9".repeat(65 + random.nextInt(5000)) + "}";
                return new Attack("nesting-or-huge-number", "POST", "/v1/locks/" + lcid + "/acquire", json,
                        bytes(body), key);
            }
            case 5: { // overlong values
                String body = switch (random.nextInt(3)) {
                    case 0 -> "{\"requestId\":\"" + "r".repeat(129 + random.nextInt(1000)) + "\"}";
                    case 1 -> "{\"requestId\":\"r\",\"payload\":\"" + "p".repeat(65 * 1024) + "\"}";
                    default -> "{\"requestId\":\"r\",\"reason\":\"" + "z".repeat(1025) + "\"}";
                };
                String target = body.contains("reason") ? "/v1/locks/" + lcid + "/abort" : "/v1/locks/" + lcid + "/acquire";
                return new Attack("overlong", "POST", target, json, bytes(body), key);
            }
            case 6: // a body over the HTTP limit
                return new Attack("huge-body", "POST", path, json,
                        bytes("{\"requestId\":\"r\",\"payload\":\"" + "h".repeat(300 * 1024) + "\"}"), key);
            case 7: // wrong methods
                return new Attack("wrong-method", new String[] { "PUT", "DELETE", "PATCH", "GET" }[random.nextInt(4)],
                        path, json, bytes("{\"requestId\":\"r\"}"), key);
            case 8: // wrong content types
                return new Attack("wrong-content-type", "POST", path,
                        new String[] { "text/plain", "application/xml", "application/x-www-form-urlencoded",
                                "multipart/form-data; boundary=x", "application/json-patch+json" }[random.nextInt(5)],
                        bytes("requestId=r"), key);
            case 9: // bad credentials
                return new Attack("bad-credentials", "POST", "/v1/locks/" + lcid + "/acquire", json,
                        bytes("{\"requestId\":\"r\"}"), new String[] { null, "Bearer ", "Bearer x", "Basic Zm9vOmJhcg==",
                                "bearer " + AuthEnabledProfile.KEY_A + "x", "Bearer " + "k".repeat(5000) }[random.nextInt(6)]);
            case 10: // traversal and odd paths
                return new Attack("odd-path", "GET", new String[] { "/v1/locks/../../etc/passwd", "/v1/%2e%2e/locks",
                        "/v1/locks/" + lcid + "/requests/%00", "/v1/locks/" + lcid + "/requests/..%2f..",
                        "/v1/dead-letters?limit=%00", "/v1/dead-letters?limit=-1",
                        "/v1/dead-letters?limit=99999999999999999999", "/v1/locks/" + lcid + "/requests/a%7Bb" }
                        [random.nextInt(8)], null, null,
                        random.nextBoolean() ? "Bearer " + AuthEnabledProfile.ADMIN_KEY_A : key);
            default: { // missing required fields, empty and non-object bodies
                String body = new String[] { "", "{}", "[]", "null", "\"x\"", "{\"requestId\":null}", "{\"token\":\"\"}",
                        "{\"requestId\":\"r\",\"token\":\"t t\"}", "{\"requestId\":\"r\"}{\"requestId\":\"s\"}",
                        "{\"requestId\":\"r\",\"requestId\":\"s\",\"leaseMs\":1}" }[random.nextInt(10)];
                // Bodies that only some operations refuse go to those operations.
                String target = body.contains("\"requestId\":\"r\"}{") || body.contains("\"requestId\":\"s\",\"leaseMs\"")
                        ? "/v1/locks/" + lcid + "/heartbeat"
                        : body.contains("t t") ? "/v1/locks/" + lcid + "/complete" : path;
                return new Attack("missing-fields", "POST", target, json, bytes(body), key);
            }
        }
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
