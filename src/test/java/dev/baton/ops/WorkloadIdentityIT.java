package dev.baton.ops;

import static dev.baton.testing.TestIssuer.serviceAccount;
import static dev.baton.testing.TestIssuer.sign;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.jose4j.jwk.RsaJsonWebKey;
import org.jose4j.jwt.JwtClaims;
import org.junit.jupiter.api.Test;

import com.sun.net.httpserver.HttpServer;

import dev.baton.security.BearerAuthMechanism;
import dev.baton.testing.Contract;
import dev.baton.testing.JwksServerResource;
import dev.baton.testing.PackagedService;
import dev.baton.testing.TestIssuer;
import dev.baton.testing.TestRedis;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;

/** The packaged service in prod, configured for workload tokens by environment variables only. */
class WorkloadIdentityIT {

    @Test
    void given_jwt_settings_in_environment_variables_then_tokens_are_verified_by_them() throws Exception {
        RsaJsonWebKey key = TestIssuer.newKey("prod-key-1");
        Path jwks = Files.createTempFile("baton-it-jwks", ".json");
        TestIssuer.publish(jwks, key);
        HttpServer issuer = JwksServerResource.serve(jwks);
        TestRedis redis = TestRedis.start();
        int port = EmbeddedRedis.freePort();
        PackagedService service = PackagedService.launch(Map.of(
                "QUARKUS_REDIS_HOSTS", redis.url(),
                "QUARKUS_HTTP_PORT", Integer.toString(port),
                "BATON_AUTH_API_KEYS_ENABLED", "false",
                "BATON_AUTH_JWT_ENABLED", "true",
                "BATON_AUTH_JWT_JWKS", JwksServerResource.url(issuer),
                "BATON_AUTH_JWT_ISSUER", TestIssuer.ISSUER,
                "BATON_AUTH_JWT_AUDIENCE", "baton-prod",
                "BATON_AUTH_JWT_CLOCK_SKEW_SECONDS", "1",
                "BATON_AUTH_JWT_RULES", "orders/payment-svc=orders:worker,orders/baton-operator=orders:admin"));
        try {
            service.awaitListening();
            String base = "http://127.0.0.1:" + port;
            String lcid = "order-" + System.nanoTime();

            JwtClaims worker = serviceAccount("orders", "payment-svc");
            worker.setAudience("baton-prod");
            as(sign(worker, key)).body("{\"requestId\":\"a\"}").post(base + "/v1/locks/" + lcid + "/acquire")
                    .then().statusCode(200).body("status", equalTo("ACQUIRED"));
            as(sign(worker, key)).get(base + "/v1/dead-letters").then().statusCode(403);

            JwtClaims admin = serviceAccount("orders", "baton-operator");
            admin.setAudience("baton-prod");
            as(sign(admin, key)).get(base + "/v1/dead-letters").then().statusCode(200);

            // The default audience no longer applies: BATON_AUTH_JWT_AUDIENCE replaced it.
            as(sign(serviceAccount("orders", "payment-svc"), key)).get(base + "/v1/locks/" + lcid).then()
                    .statusCode(401).header("WWW-Authenticate", BearerAuthMechanism.CHALLENGE)
                    .body("detail", equalTo("the token's audience (aud) does not name this service"));

            // One second of clock skew (the default is 30): a token expired five seconds ago is refused.
            JwtClaims late = serviceAccount("orders", "payment-svc");
            late.setAudience("baton-prod");
            late.setIssuedAt(TestIssuer.secondsFromNow(-600));
            late.setNotBefore(TestIssuer.secondsFromNow(-600));
            late.setExpirationTime(TestIssuer.secondsFromNow(-5));
            as(sign(late, key)).get(base + "/v1/locks/" + lcid).then().statusCode(401)
                    .body("detail", equalTo("the token has expired"));

            given().filter(Contract.FILTER).auth().oauth2("an-api-key").get(base + "/v1/locks/" + lcid).then()
                    .statusCode(401).body("detail", equalTo("this service accepts JWTs only, and this token is not one"));
        } finally {
            service.process().destroy();
            service.process().waitFor(30, TimeUnit.SECONDS);
            redis.close();
            issuer.stop(0);
            Files.deleteIfExists(jwks);
        }
    }

    private static RequestSpecification as(String token) {
        return given().filter(Contract.FILTER).auth().oauth2(token).contentType(ContentType.JSON);
    }
}
