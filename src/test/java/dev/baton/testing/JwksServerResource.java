package dev.baton.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import com.sun.net.httpserver.HttpServer;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/**
 * An issuer's JWKS endpoint on localhost: serves whatever the test last wrote to the file named by
 * {@link #FILE_PROPERTY}, so a test rotates keys by rewriting it (the file is the hand-over
 * between the test and this resource, which may live in another class loader).
 */
public class JwksServerResource implements QuarkusTestResourceLifecycleManager {

    public static final String FILE_PROPERTY = "test.jwks.file";

    private HttpServer server;
    private Path file;

    @Override
    public Map<String, String> start() {
        try {
            file = Files.createTempFile("baton-jwks", ".json");
            Files.writeString(file, "{\"keys\":[]}");
            server = serve(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Map.of("baton.auth.jwt.jwks", url(server), FILE_PROPERTY, file.toString());
    }

    /** Serves the file at /openid/v1/jwks, read again for every request. */
    public static HttpServer serve(Path file) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/openid/v1/jwks", exchange -> {
            byte[] body = Files.readAllBytes(file);
            exchange.getResponseHeaders().set("Content-Type", "application/jwk-set+json");
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        return server;
    }

    public static String url(HttpServer server) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/openid/v1/jwks";
    }

    @Override
    public void stop() {
        if (server != null) {
            server.stop(0);
        }
        try {
            if (file != null) {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            // a temp file left behind is harmless
        }
    }
}
