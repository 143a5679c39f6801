package dev.baton.api;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import io.vertx.ext.web.Router;

/**
 * The operator console is static (META-INF/resources/console): a page that calls the public API
 * with the key the operator types. This only sends {@code /console} to {@code /console/}, where
 * the static handler serves its index.
 */
@ApplicationScoped
public class ConsolePage {

    void routes(@Observes Router router) {
        // A Vert.x route for /console also matches /console/: only the bare path is sent on.
        router.get("/console").handler(context -> {
            if (context.request().path().equals("/console")) {
                context.redirect("/console/");
            } else {
                context.next();
            }
        });
    }
}
