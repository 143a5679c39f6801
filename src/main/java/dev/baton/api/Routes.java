package dev.baton.api;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.Path;

/**
 * The API's paths as templates ({@code /v1/locks/{lcid}/heartbeat}) with their methods, read from the
 * resource classes' own annotations, so that nothing repeats the routes by hand. Used where the REST
 * layer did not match a call to a method: the {@code Allow} header of a 405, and the {@code uri} label
 * of the HTTP metrics, which must never carry a caller-chosen path (one series per lcid otherwise).
 */
public final class Routes {

    private static final Pattern PARAMETER = Pattern.compile("\\{[^}/]+}");

    /** Every resource class of the API (after PARAMETER: static fields start in this order). */
    static final Routes API = of(LockResource.class, WorkResource.class);

    private record Route(String template, Pattern pattern, Set<String> methods) {
    }

    private final List<Route> routes;

    private Routes(List<Route> routes) {
        this.routes = List.copyOf(routes);
    }

    static Routes of(Class<?>... resources) {
        Map<String, Set<String>> methods = new LinkedHashMap<>();
        for (Class<?> resource : resources) {
            String base = pathOf(resource.getAnnotation(Path.class));
            for (Method method : resource.getMethods()) {
                String verb = verbOf(method);
                if (verb != null) {
                    String template = join(base, pathOf(method.getAnnotation(Path.class)));
                    methods.computeIfAbsent(template, t -> new TreeSet<>()).add(verb);
                }
            }
        }
        List<Route> routes = new ArrayList<>();
        methods.forEach((template, verbs) -> {
            if (verbs.contains("GET")) {
                verbs.add("HEAD"); // JAX-RS answers HEAD wherever there is a GET
            }
            routes.add(new Route(template, compile(template), Collections.unmodifiableSet(verbs)));
        });
        return new Routes(routes);
    }

    /** The template a concrete path matches, if any. */
    public Optional<String> template(String path) {
        return find(path).map(Route::template);
    }

    /** The value of an {@code Allow} header for a path ("GET, HEAD"), if the path is one of the API's. */
    public Optional<String> allowed(String path) {
        return find(path).map(route -> String.join(", ", route.methods()));
    }

    private Optional<Route> find(String path) {
        for (Route route : routes) {
            if (route.pattern().matcher(path).matches()) {
                return Optional.of(route);
            }
        }
        return Optional.empty();
    }

    private static Pattern compile(String template) {
        StringBuilder regex = new StringBuilder();
        Matcher parameter = PARAMETER.matcher(template);
        int last = 0;
        while (parameter.find()) {
            regex.append(Pattern.quote(template.substring(last, parameter.start()))).append("[^/]+");
            last = parameter.end();
        }
        regex.append(Pattern.quote(template.substring(last)));
        return Pattern.compile(regex.toString());
    }

    private static String verbOf(Method method) {
        for (Annotation annotation : method.getAnnotations()) {
            HttpMethod verb = annotation.annotationType().getAnnotation(HttpMethod.class);
            if (verb != null) {
                return verb.value();
            }
        }
        return null;
    }

    private static String pathOf(Path path) {
        return path == null ? "" : path.value();
    }

    private static String join(String base, String sub) {
        String left = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
        if (sub.isEmpty()) {
            return left;
        }
        return left + (sub.startsWith("/") ? sub : "/" + sub);
    }
}
