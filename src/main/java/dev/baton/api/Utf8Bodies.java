package dev.baton.api;

import java.io.IOException;
import java.io.PushbackInputStream;

import jakarta.ws.rs.ext.Provider;
import jakarta.ws.rs.ext.ReaderInterceptor;
import jakarta.ws.rs.ext.ReaderInterceptorContext;

/**
 * Request bodies are JSON in UTF-8 (RFC 8259: JSON exchanged between systems is UTF-8). Jackson
 * would guess UTF-16 or UTF-32 from the first bytes and read them, and another reader of the same
 * bytes may not guess the same: such a body is a 400 naming {@code body}. A UTF-8 byte order mark is
 * accepted (Jackson skips it); invalid UTF-8 further on is Jackson's to refuse.
 */
@Provider
public class Utf8Bodies implements ReaderInterceptor {

    /** Thrown for a body that is not UTF-8; {@link ProblemMappers} answers it. */
    public static final class NotUtf8 extends RuntimeException {
        NotUtf8() {
            super("the body must be JSON encoded as UTF-8", null, false, false);
        }
    }

    @Override
    public Object aroundReadFrom(ReaderInterceptorContext context) throws IOException {
        PushbackInputStream body = new PushbackInputStream(context.getInputStream(), 4);
        byte[] head = body.readNBytes(4);
        if (!utf8(head)) {
            throw new NotUtf8();
        }
        body.unread(head);
        context.setInputStream(body);
        return context.proceed();
    }

    /**
     * JSON text in UTF-8 starts with an ASCII character (or a UTF-8 BOM); UTF-16 and UTF-32 put a NUL
     * byte in the first four, or start with their own BOM (FE FF, FF FE).
     */
    static boolean utf8(byte[] head) {
        if (head.length >= 2) {
            int first = head[0] & 0xFF;
            int second = head[1] & 0xFF;
            if (first == 0xFE && second == 0xFF || first == 0xFF && second == 0xFE) {
                return false;
            }
        }
        for (byte b : head) {
            if (b == 0) {
                return false;
            }
        }
        return true;
    }
}
