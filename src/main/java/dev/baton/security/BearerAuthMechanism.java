package dev.baton.security;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import jakarta.enterprise.context.ApplicationScoped;

import org.jose4j.jwx.JsonWebStructure;
import org.jose4j.lang.JoseException;

import dev.baton.config.BatonConfig;
import io.quarkus.security.credential.TokenCredential;
import io.quarkus.security.identity.IdentityProviderManager;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.security.identity.request.AuthenticationRequest;
import io.quarkus.security.identity.request.TokenAuthenticationRequest;
import io.quarkus.security.runtime.QuarkusPrincipal;
import io.quarkus.security.runtime.QuarkusSecurityIdentity;
import io.quarkus.smallrye.jwt.runtime.auth.JsonWebTokenCredential;
import io.quarkus.vertx.http.runtime.security.ChallengeData;
import io.quarkus.vertx.http.runtime.security.HttpAuthenticationMechanism;
import io.quarkus.vertx.http.runtime.security.HttpSecurityUtils;
import io.smallrye.mutiny.Uni;
import io.vertx.ext.web.RoutingContext;

/**
 * {@code Authorization: Bearer <API key or JWT>} on the API port. A JWT has three dot-separated
 * parts and an API key never has a dot, so the shape alone says which one was sent; each goes only
 * to its own verifier (smallrye-jwt's, or {@link ApiKeyIdentityProvider}). No header: anonymous
 * (refused later, by {@link Callers}). Several {@code Authorization} headers: refused. With
 * authentication off every call is let through and any credential is ignored.
 *
 * <p>Runs before smallrye-jwt's own mechanism, which therefore never sees a token.
 */
@ApplicationScoped
public class BearerAuthMechanism implements HttpAuthenticationMechanism {

    /** The challenge of every 401 (RFC 6750): the token sent, or its absence, does not do. */
    public static final String CHALLENGE = "Bearer realm=\"baton\", error=\"invalid_token\"";

    /** The challenge of every 403: the caller is known, but not allowed this. */
    public static final String FORBIDDEN_CHALLENGE = "Bearer realm=\"baton\", error=\"insufficient_scope\"";

    private static final String BEARER = "Bearer ";

    /**
     * The caller with authentication off: {@link Callers} makes it the default tenant's admin. With a
     * principal of no name, as Quarkus' own anonymous identity has: the HTTP access log (which dev
     * mode turns on) reads the principal's name of every call.
     */
    private static final Uni<SecurityIdentity> AUTH_OFF = Uni.createFrom()
            .item(QuarkusSecurityIdentity.builder().setAnonymous(true).setPrincipal(new QuarkusPrincipal("")).build());

    private final boolean enabled;
    private final boolean apiKeys;
    private final boolean jwt;
    private final Set<String> algorithms;
    private final VerifiedTokens verified = new VerifiedTokens(System::currentTimeMillis);

    public BearerAuthMechanism(BatonConfig config) {
        this.enabled = config.auth().enabled();
        this.apiKeys = config.auth().apiKeysEnabled();
        this.jwt = config.auth().jwt().enabled();
        this.algorithms = config.auth().jwt().algorithms().stream().map(String::trim).collect(Collectors.toSet());
    }

    @Override
    public Uni<SecurityIdentity> authenticate(RoutingContext context, IdentityProviderManager identities) {
        if (!enabled) {
            // Credentials are ignored, whatever they are: an identity (rather than none) ends the
            // search here, so smallrye-jwt's mechanism never tries to verify a key sent to dev mode.
            return AUTH_OFF;
        }
        List<String> headers = context.request().headers().getAll("Authorization");
        if (headers.isEmpty()) {
            return Uni.createFrom().optional(Optional.empty());
        }
        if (headers.size() > 1) {
            return refuse(TokenRejection.SEVERAL_HEADERS); // never first-wins (or last-wins)
        }
        String header = headers.get(0);
        if (!header.regionMatches(true, 0, BEARER, 0, BEARER.length()) || header.length() <= BEARER.length()) {
            return refuse(TokenRejection.NOT_BEARER);
        }
        String token = header.substring(BEARER.length()).trim();
        if (looksLikeJwt(token)) {
            if (!jwt) {
                return refuse(TokenRejection.JWT_OFF);
            }
            TokenRejection badHeader = checkHeader(token);
            if (badHeader != null) {
                return refuse(badHeader);
            }
            String digest = ApiKeys.sha256(token);
            SecurityIdentity known = verified.get(digest);
            if (known != null) {
                return Uni.createFrom().item(known);
            }
            TokenAuthenticationRequest request = new TokenAuthenticationRequest(new JsonWebTokenCredential(token));
            HttpSecurityUtils.setRoutingContextAttribute(request, context);
            return identities.authenticate(request).invoke(identity -> remember(digest, identity));
        } else {
            if (!apiKeys) {
                return refuse(TokenRejection.API_KEYS_OFF);
            }
            TokenAuthenticationRequest request = new TokenAuthenticationRequest(new TokenCredential(token, "bearer"));
            HttpSecurityUtils.setRoutingContextAttribute(request, context);
            return identities.authenticate(request);
        }
    }

    private void remember(String digest, SecurityIdentity identity) {
        Long expiresAtMs = identity.getAttribute(CallerIdentity.EXPIRES_AT_MS);
        if (expiresAtMs != null) {
            verified.put(digest, identity, expiresAtMs);
        }
    }

    private static Uni<SecurityIdentity> refuse(TokenRejection rejection) {
        return Uni.createFrom().failure(rejection.exception());
    }

    /** header.payload.signature, each part base64url: what RFC 7519 calls a JWS compact serialization. */
    static boolean looksLikeJwt(String token) {
        int first = token.indexOf('.');
        int second = first < 0 ? -1 : token.indexOf('.', first + 1);
        return first > 0 && second > first + 1 && token.indexOf('.', second + 1) < 0;
    }

    /**
     * Refuses an unparseable header or a refused algorithm (none, HS256, ...) before any key is looked
     * up: smallrye-jwt would otherwise miss the key for it and fetch the JWKS again, so such tokens
     * could spend the forced-refresh budget that a real key rotation needs.
     */
    private TokenRejection checkHeader(String token) {
        try {
            String algorithm = JsonWebStructure.fromCompactSerialization(token).getAlgorithmHeaderValue();
            return algorithm != null && algorithms.contains(algorithm) ? null : TokenRejection.ALGORITHM;
        } catch (JoseException | RuntimeException e) {
            return TokenRejection.MALFORMED;
        }
    }

    @Override
    public Uni<ChallengeData> getChallenge(RoutingContext context) {
        return Uni.createFrom().item(new ChallengeData(401, "WWW-Authenticate", CHALLENGE));
    }

    @Override
    public Set<Class<? extends AuthenticationRequest>> getCredentialTypes() {
        return Set.of(TokenAuthenticationRequest.class);
    }

    /** Above smallrye-jwt's mechanism (default priority): this one decides what a token is. */
    @Override
    public int getPriority() {
        return DEFAULT_PRIORITY + 1000;
    }
}
