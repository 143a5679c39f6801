package dev.baton.security;

import org.jose4j.jwt.consumer.ErrorCodes;
import org.jose4j.jwt.consumer.InvalidJwtException;
import org.jose4j.lang.InvalidAlgorithmException;
import org.jose4j.lang.JoseException;
import org.jose4j.lang.UnresolvableKeyException;

import io.quarkus.security.AuthenticationFailedException;

/**
 * Why a bearer token was refused, in words safe to send back: the library's own messages carry the
 * token's claims, so the reply and the logs only ever get one of these fixed details.
 */
public enum TokenRejection {
    NOT_BEARER("expected Authorization: Bearer <token>"),
    SEVERAL_HEADERS("send one Authorization header, not several"),
    UNKNOWN_API_KEY("the API key is not valid"),
    JWT_OFF("this service does not accept JWTs: send an API key"),
    API_KEYS_OFF("this service accepts JWTs only, and this token is not one"),
    MALFORMED("the token is not a well-formed signed JWT"),
    EXPIRED("the token has expired"),
    NO_EXPIRY("the token has no expiry (exp)"),
    NOT_YET_VALID("the token is not valid yet (nbf or iat is in the future)"),
    AUDIENCE("the token's audience (aud) does not name this service"),
    ISSUER("the token's issuer (iss) is not the trusted one"),
    ALGORITHM("the token's signing algorithm is not accepted"),
    SIGNATURE("the token's signature does not verify with a key of the trusted JWKS"),
    INVALID("the token is not valid");

    private final String detail;

    TokenRejection(String detail) {
        this.detail = detail;
    }

    public String detail() {
        return detail;
    }

    AuthenticationFailedException exception() {
        return new AuthenticationFailedException(detail, new Refused(this));
    }

    /** The rejection behind an authentication failure, whoever raised it. */
    public static TokenRejection of(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof Refused refused) {
                return refused.rejection;
            }
            if (cause instanceof InvalidJwtException invalid) {
                return ofClaims(invalid);
            }
            if (cause instanceof InvalidAlgorithmException) {
                return ALGORITHM;
            }
            if (cause instanceof UnresolvableKeyException) {
                return SIGNATURE;
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return INVALID;
    }

    private static TokenRejection ofClaims(InvalidJwtException invalid) {
        if (invalid.hasExpired()) {
            return EXPIRED;
        }
        if (invalid.hasErrorCode(ErrorCodes.EXPIRATION_MISSING)) {
            return NO_EXPIRY;
        }
        if (invalid.hasErrorCode(ErrorCodes.NOT_YET_VALID) || invalid.hasErrorCode(ErrorCodes.ISSUED_AT_INVALID_FUTURE)) {
            return NOT_YET_VALID;
        }
        if (invalid.hasErrorCode(ErrorCodes.AUDIENCE_INVALID) || invalid.hasErrorCode(ErrorCodes.AUDIENCE_MISSING)) {
            return AUDIENCE;
        }
        if (invalid.hasErrorCode(ErrorCodes.ISSUER_INVALID) || invalid.hasErrorCode(ErrorCodes.ISSUER_MISSING)) {
            return ISSUER;
        }
        if (invalid.hasErrorCode(ErrorCodes.SIGNATURE_INVALID) || invalid.hasErrorCode(ErrorCodes.SIGNATURE_MISSING)) {
            return SIGNATURE;
        }
        // jose4j reports a refused algorithm or an unknown key id as a cause, not as a code.
        for (Throwable cause = invalid.getCause(); cause != null && cause != cause.getCause(); cause = cause.getCause()) {
            if (cause instanceof InvalidAlgorithmException) {
                return ALGORITHM;
            }
            if (cause instanceof UnresolvableKeyException) {
                return SIGNATURE;
            }
        }
        if (invalid.hasErrorCode(ErrorCodes.JSON_INVALID) || invalid.hasErrorCode(ErrorCodes.MALFORMED_CLAIM)
                || invalid.hasErrorCode(ErrorCodes.MISCELLANEOUS) && invalid.getCause() instanceof JoseException) {
            return MALFORMED;
        }
        return INVALID;
    }

    /** Marks a refusal decided before any verifier ran, or by the API-key one (the exception type is final). */
    private static final class Refused extends RuntimeException {
        private final TokenRejection rejection;

        Refused(TokenRejection rejection) {
            super(rejection.detail, null, false, false);
            this.rejection = rejection;
        }
    }
}
