package dev.baton.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;

import org.eclipse.microprofile.config.ConfigProvider;

/** Operator commands sent straight to every Redis node the service under test uses. */
public final class RedisAdmin {

    private RedisAdmin() {
    }

    /** CLIENT KILL TYPE pubsub on every node: how many subscribed connections were closed. */
    public static long killPubSubClients() {
        long killed = 0;
        for (URI node : nodes()) {
            killed += integerReply(node, "CLIENT", "KILL", "TYPE", "pubsub");
        }
        return killed;
    }

    /** Subscribed connections on all nodes together (CLIENT LIST TYPE pubsub). */
    public static long pubSubClients() {
        long clients = 0;
        for (URI node : nodes()) {
            String list = call(node, "CLIENT", "LIST", "TYPE", "pubsub");
            clients += list.lines().filter(line -> !line.isBlank()).count();
        }
        return clients;
    }

    private static java.util.List<URI> nodes() {
        return java.util.Arrays.stream(ConfigProvider.getConfig().getValue("quarkus.redis.hosts", String.class)
                .split(",")).map(host -> URI.create(host.trim())).toList();
    }

    private static long integerReply(URI node, String... command) {
        String reply = call(node, command);
        return Long.parseLong(reply);
    }

    /** One command; an integer reply as its digits, a bulk string as its text. */
    private static String call(URI node, String... command) {
        try (Socket socket = new Socket(node.getHost(), node.getPort())) {
            StringBuilder request = new StringBuilder("*").append(command.length).append("\r\n");
            for (String part : command) {
                request.append('$').append(part.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(part)
                        .append("\r\n");
            }
            OutputStream out = socket.getOutputStream();
            out.write(request.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            String reply = in.readLine();
            if (reply != null && reply.startsWith(":")) {
                return reply.substring(1);
            }
            if (reply != null && reply.startsWith("$")) {
                char[] text = new char[Integer.parseInt(reply.substring(1))];
                int read = 0;
                while (read < text.length) {
                    int n = in.read(text, read, text.length - read);
                    if (n < 0) {
                        break;
                    }
                    read += n;
                }
                return new String(text, 0, read);
            }
            throw new IllegalStateException(String.join(" ", command) + " on " + node + ": " + reply);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
