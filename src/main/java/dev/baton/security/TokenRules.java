package dev.baton.security;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;

import org.eclipse.microprofile.jwt.JsonWebToken;

import dev.baton.config.BatonConfig;

/**
 * {@code baton.auth.jwt.rules}: which tenant, and which role, a verified token speaks for. The
 * token itself never decides (its {@code groups} or scopes are ignored); the operator's rules do,
 * first match wins, and a token no rule matches is refused.
 *
 * <p>A rule is {@code selector=tenant:role}, role {@code worker} or {@code admin}, the selector one of
 * <ul>
 * <li>{@code namespace/serviceaccount}, or {@code namespace/*}: a Kubernetes service-account token,
 * read from its {@code kubernetes.io} claim (or a {@code system:serviceaccount:ns:name} subject);
 * <li>{@code claim:name:value}: a top-level claim equal to value, or an array claim containing it.
 * </ul>
 */
@Singleton
public class TokenRules {

    private static final Pattern TARGET = Pattern.compile("([A-Za-z0-9_-]{1,64}):(worker|admin)");
    private static final Pattern K8S_NAME = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");
    private static final String SA_SUBJECT = "system:serviceaccount:";

    private final List<Rule> rules = new ArrayList<>();

    @Inject
    public TokenRules(BatonConfig config) {
        this(config.auth().jwt().rules().orElse(List.of()));
    }

    TokenRules(List<String> entries) {
        for (int i = 0; i < entries.size(); i++) {
            rules.add(parse(entries.get(i).trim(), i));
        }
    }

    public Optional<Caller> match(JsonWebToken token) {
        for (Rule rule : rules) {
            if (rule.selector().matches(token)) {
                return Optional.of(rule.caller());
            }
        }
        return Optional.empty();
    }

    public boolean isEmpty() {
        return rules.isEmpty();
    }

    public Set<String> tenants() {
        Set<String> tenants = new TreeSet<>();
        rules.forEach(rule -> tenants.add(rule.caller().tenant()));
        return tenants;
    }

    private static Rule parse(String entry, int index) {
        int equals = entry.lastIndexOf('=');
        String where = "baton.auth.jwt.rules[" + index + "]: ";
        if (equals <= 0) {
            throw new IllegalStateException(where + "expected selector=tenant:role, for example "
                    + "orders/payment-svc=orders:worker or claim:azp:billing=billing:admin");
        }
        Matcher target = TARGET.matcher(entry.substring(equals + 1).trim());
        if (!target.matches()) {
            throw new IllegalStateException(where + "after '=' expected tenant:worker or tenant:admin"
                    + " (tenant: 1 to 64 of A-Z a-z 0-9 _ -)");
        }
        Caller caller = new Caller(target.group(1), target.group(2).equals(CallerIdentity.ADMIN));
        return new Rule(selector(entry.substring(0, equals).trim(), where), caller);
    }

    private static Selector selector(String text, String where) {
        if (text.startsWith("claim:")) {
            int colon = text.indexOf(':', "claim:".length());
            if (colon <= "claim:".length() || colon == text.length() - 1) {
                throw new IllegalStateException(where + "expected claim:<name>:<value>");
            }
            return new ClaimEquals(text.substring("claim:".length(), colon), text.substring(colon + 1));
        }
        int slash = text.indexOf('/');
        String namespace = slash < 0 ? "" : text.substring(0, slash);
        String account = slash < 0 ? "" : text.substring(slash + 1);
        if (!K8S_NAME.matcher(namespace).matches() || !(account.equals("*") || K8S_NAME.matcher(account).matches())) {
            throw new IllegalStateException(where + "expected namespace/serviceaccount, namespace/* or "
                    + "claim:<name>:<value> before '='");
        }
        return new ServiceAccount(namespace, account.equals("*") ? null : account);
    }

    private record Rule(Selector selector, Caller caller) {
    }

    private sealed interface Selector permits ServiceAccount, ClaimEquals {
        boolean matches(JsonWebToken token);
    }

    /** A Kubernetes service account; {@code name} null for any in the namespace. */
    private record ServiceAccount(String namespace, String name) implements Selector {
        @Override
        public boolean matches(JsonWebToken token) {
            Optional<String[]> account = serviceAccountOf(token);
            return account.isPresent() && account.get()[0].equals(namespace)
                    && (name == null || account.get()[1].equals(name));
        }
    }

    private record ClaimEquals(String claim, String value) implements Selector {
        @Override
        public boolean matches(JsonWebToken token) {
            return contains(token.getClaim(claim), value);
        }
    }

    /** {namespace, name}: from the {@code kubernetes.io} claim, else from the subject the API server sets. */
    static Optional<String[]> serviceAccountOf(JsonWebToken token) {
        Object claim = token.getClaim("kubernetes.io");
        if (claim instanceof JsonObject k8s && k8s.get("namespace") instanceof JsonString namespace
                && k8s.get("serviceaccount") instanceof JsonObject account
                && account.get("name") instanceof JsonString name) {
            return Optional.of(new String[] {namespace.getString(), name.getString()});
        }
        String subject = token.getSubject();
        if (subject != null && subject.startsWith(SA_SUBJECT)) {
            String[] parts = subject.substring(SA_SUBJECT.length()).split(":", -1);
            if (parts.length == 2 && !parts[0].isEmpty() && !parts[1].isEmpty()) {
                return Optional.of(parts);
            }
        }
        return Optional.empty();
    }

    private static boolean contains(Object claim, String value) {
        if (claim == null) {
            return false;
        }
        if (claim instanceof JsonString string) {
            return string.getString().equals(value);
        }
        if (claim instanceof JsonArray array) {
            return array.stream().anyMatch(element -> contains(element, value));
        }
        if (claim instanceof Collection<?> collection) {
            return collection.stream().anyMatch(element -> contains(element, value));
        }
        if (claim instanceof JsonObject || claim instanceof Map<?, ?> || claim == JsonValue.NULL) {
            return false;
        }
        return claim.toString().equals(value); // strings, numbers, booleans
    }
}
