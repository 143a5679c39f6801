package dev.baton.client;

/**
 * An answer that is not what Baton sends: not problem+json (a proxy's HTML 502, say), or a success body that
 * is not the JSON expected. Never retried: a proxy's error page says nothing about what Baton stored.
 */
public class UnexpectedResponseException extends BatonException {
    private final int status;
    private final String bodyText;
    private final String contentType;

    public UnexpectedResponseException(int status, String contentType, String bodyText, String why) {
        super("unexpected answer: HTTP " + status + " (" + (contentType == null ? "no content type" : contentType)
                + "): " + why + (bodyText == null || bodyText.isEmpty() ? "" : ": " + abbreviate(bodyText)));
        this.status = status;
        this.bodyText = bodyText == null ? "" : bodyText;
        this.contentType = contentType;
    }

    private static String abbreviate(String s) {
        String one = s.replaceAll("\\s+", " ").trim();
        return one.length() <= 200 ? one : one.substring(0, 200) + "...";
    }

    /** The HTTP status. */
    public int status() {
        return status;
    }

    /** The whole body, as text. */
    public String bodyText() {
        return bodyText;
    }

    /** The Content-Type header, or null. */
    public String contentType() {
        return contentType;
    }
}
