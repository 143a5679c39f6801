package dev.baton.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import org.eclipse.microprofile.config.ConfigProvider;
import org.jose4j.jwk.JsonWebKey;
import org.jose4j.jwk.JsonWebKeySet;
import org.jose4j.jwk.RsaJsonWebKey;
import org.jose4j.jwk.RsaJwkGenerator;
import org.jose4j.jws.AlgorithmIdentifiers;
import org.jose4j.jws.JsonWebSignature;
import org.jose4j.jwt.JwtClaims;
import org.jose4j.jwt.NumericDate;
import org.jose4j.jwa.AlgorithmConstraints;
import org.jose4j.keys.HmacKey;
import org.jose4j.lang.JoseException;

/**
 * A token issuer made up by the test: RSA keys generated here, tokens shaped like Kubernetes
 * service-account tokens, and the hostile ones a real issuer never signs.
 */
public final class TestIssuer {

    public static final String ISSUER = "https://kubernetes.default.svc.cluster.local";

    private TestIssuer() {
    }

    public static RsaJsonWebKey newKey(String kid) {
        try {
            RsaJsonWebKey key = RsaJwkGenerator.generateJwk(2048);
            key.setKeyId(kid);
            key.setAlgorithm(AlgorithmIdentifiers.RSA_USING_SHA256);
            return key;
        } catch (JoseException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Makes the JWKS server (JwksServerResource) publish exactly these public keys. */
    public static void publish(RsaJsonWebKey... keys) {
        publish(Path.of(ConfigProvider.getConfig().getValue(JwksServerResource.FILE_PROPERTY, String.class)), keys);
    }

    public static void publish(Path file, RsaJsonWebKey... keys) {
        String json = new JsonWebKeySet(List.<JsonWebKey>of(keys)).toJson(JsonWebKey.OutputControlLevel.PUBLIC_ONLY);
        try {
            Files.writeString(file, json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The claims of a projected service-account token of namespace/account, valid for ten minutes. */
    public static JwtClaims serviceAccount(String namespace, String account) {
        JwtClaims claims = new JwtClaims();
        claims.setIssuer(ISSUER);
        claims.setAudience("baton");
        claims.setSubject("system:serviceaccount:" + namespace + ":" + account);
        claims.setIssuedAtToNow();
        claims.setNotBeforeMinutesInThePast(0);
        claims.setExpirationTimeMinutesInTheFuture(10);
        claims.setClaim("kubernetes.io", Map.of("namespace", namespace,
                "serviceaccount", Map.of("name", account, "uid", "0b9f5c1e-uid"),
                "pod", Map.of("name", account + "-7d9c", "uid", "5e2a-uid")));
        return claims;
    }

    public static JwtClaims claims(String subject) {
        JwtClaims claims = new JwtClaims();
        claims.setIssuer(ISSUER);
        claims.setAudience("baton");
        claims.setSubject(subject);
        claims.setIssuedAtToNow();
        claims.setExpirationTimeMinutesInTheFuture(10);
        return claims;
    }

    public static NumericDate secondsFromNow(long seconds) {
        NumericDate date = NumericDate.now();
        date.addSeconds(seconds);
        return date;
    }

    public static String sign(JwtClaims claims, RsaJsonWebKey key) {
        return sign(claims, key, key.getKeyId());
    }

    /** Signed by key, but announcing another key's id (a forger who knows the issuer's kid). */
    public static String sign(JwtClaims claims, RsaJsonWebKey key, String kid) {
        JsonWebSignature jws = new JsonWebSignature();
        jws.setPayload(claims.toJson());
        jws.setKey(key.getPrivateKey());
        jws.setKeyIdHeaderValue(kid);
        jws.setAlgorithmHeaderValue(AlgorithmIdentifiers.RSA_USING_SHA256);
        return compact(jws);
    }

    /** {@code alg: none}: no signature at all. */
    public static String unsigned(JwtClaims claims, String kid) {
        JsonWebSignature jws = new JsonWebSignature();
        jws.setPayload(claims.toJson());
        jws.setKeyIdHeaderValue(kid);
        jws.setAlgorithmHeaderValue(AlgorithmIdentifiers.NONE);
        jws.setAlgorithmConstraints(AlgorithmConstraints.NO_CONSTRAINTS);
        return compact(jws);
    }

    /**
     * HS256 keyed with the issuer's public key: the classic confusion attack against a verifier
     * that lets the token pick the algorithm (the public key is public, so anyone can do this).
     */
    public static String hmacWithPublicKey(JwtClaims claims, RsaJsonWebKey key) {
        JsonWebSignature jws = new JsonWebSignature();
        jws.setPayload(claims.toJson());
        jws.setKey(new HmacKey(key.getPublicKey().getEncoded()));
        jws.setKeyIdHeaderValue(key.getKeyId());
        jws.setAlgorithmHeaderValue(AlgorithmIdentifiers.HMAC_SHA256);
        jws.setDoKeyValidation(false);
        return compact(jws);
    }

    private static String compact(JsonWebSignature jws) {
        try {
            return jws.getCompactSerialization();
        } catch (JoseException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The token's payload, as the test wrote it: for checks that no log repeats it. */
    public static String payloadOf(String token) {
        return new String(Base64.getUrlDecoder().decode(token.split("\\.")[1]), StandardCharsets.UTF_8);
    }
}
