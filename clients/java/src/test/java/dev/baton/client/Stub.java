package dev.baton.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.function.Function;

/**
 * A tiny local HTTP server for transport behaviour only (retries, Retry-After, non-JSON answers, the 502
 * scenario): never a stand-in for Baton's logic.
 */
final class Stub implements AutoCloseable {
    record Call(String method, String path, String body, Map<String, List<String>> headers) {
    }

    record Reply(int status, String contentType, String body, Map<String, String> headers, long delayMs) {
        static Reply json(int status, String body) {
            return new Reply(status, "application/json", body, Map.of(), 0);
        }

        static Reply problem(int status, String code, String retryAfter) {
            String body = "{\"type\":\"urn:baton:problem:" + code.toLowerCase().replace('_', '-') + "\",\"title\":\"t\","
                    + "\"status\":" + status + ",\"code\":\"" + code + "\",\"detail\":\"stub " + code + "\",\"instance\":\"/x\"}";
            return new Reply(status, "application/problem+json", body,
                    retryAfter == null ? Map.of() : Map.of("Retry-After", retryAfter), 0);
        }
    }

    final List<Call> calls = new CopyOnWriteArrayList<>();
    private final HttpServer server;

    Stub(Function<Call, Reply> answer) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "stub");
            t.setDaemon(true);
            return t;
        }));
        server.createContext("/", ex -> handle(ex, answer));
        server.start();
    }

    private void handle(HttpExchange ex, Function<Call, Reply> answer) throws IOException {
        String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        Call call = new Call(ex.getRequestMethod(), ex.getRequestURI().toString(), body, ex.getRequestHeaders());
        calls.add(call);
        Reply r = answer.apply(call);
        if (r.delayMs() > 0) {
            try {
                Thread.sleep(r.delayMs());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        byte[] out = r.body() == null ? new byte[0] : r.body().getBytes(StandardCharsets.UTF_8);
        if (r.contentType() != null) {
            ex.getResponseHeaders().set("Content-Type", r.contentType());
        }
        r.headers().forEach((k, v) -> ex.getResponseHeaders().set(k, v));
        try {
            ex.sendResponseHeaders(r.status(), r.status() == 204 ? -1 : out.length);
            if (r.status() != 204) {
                try (OutputStream os = ex.getResponseBody()) {
                    os.write(out);
                }
            }
        } catch (IOException clientGone) {
            // the client timed out first
        } finally {
            ex.close();
        }
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    long count(String pathPart) {
        return calls.stream().filter(c -> c.path().contains(pathPart)).count();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
