package dev.baton.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.endsWith;
import static org.hamcrest.Matchers.not;

import org.junit.jupiter.api.Test;

import dev.baton.testing.AuthEnabledProfile;
import dev.baton.testing.RedisTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * The console's files are served without a key, even with authentication on (the page asks for
 * one and sends it with each API call). Its behaviour is tested in a browser: src/test/browser.
 */
@QuarkusTest
@TestProfile(AuthEnabledProfile.class)
@WithTestResource(RedisTestResource.class)
class ConsoleServedTest {

    @Test
    void given_no_key_when_opening_the_console_then_its_page_script_and_style_are_served() {
        given().redirects().follow(false).get("/console").then().statusCode(302)
                .header("Location", endsWith("/console/"));
        given().get("/console/").then().statusCode(200).contentType(containsString("text/html"))
                .body(containsString("<title>Baton console</title>"))
                .body(containsString("script-src 'self'"))
                .body(not(containsString("<script>")));
        given().get("/console/console.js").then().statusCode(200).body(containsString("textContent"));
        given().get("/console/console.css").then().statusCode(200);
    }

    @Test
    void given_no_key_then_the_api_behind_the_console_still_refuses() {
        given().get("/v1/busy-locks").then().statusCode(401);
        given().get("/v1/dead-letters").then().statusCode(401);
    }
}
