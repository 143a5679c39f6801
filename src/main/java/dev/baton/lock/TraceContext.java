package dev.baton.lock;

/**
 * The W3C trace context (traceparent, tracestate) of the call that submitted a request. Stored with
 * the request and handed out with it, so that whoever works on it can link its span to the
 * submitter's. Headers that are not valid W3C trace context are ignored, as the W3C
 * recommendation says a receiver must: a proxy's or a mesh's header never fails a lock call.
 */
public record TraceContext(String traceparent, String tracestate) {

    public static final TraceContext NONE = new TraceContext(null, null);

    /** The recommendation's limit for tracestate; longer ones may be cut, Baton drops them. */
    static final int MAX_TRACESTATE_CHARS = 512;

    private static final String ZERO_TRACE_ID = "00000000000000000000000000000000";
    private static final String ZERO_PARENT_ID = "0000000000000000";

    /** From the two headers as received (either may be null). */
    public static TraceContext of(String traceparent, String tracestate) {
        if (traceparent == null || !validParent(traceparent.trim())) {
            return NONE;
        }
        String state = tracestate == null ? null : tracestate.trim();
        if (state != null && (state.isEmpty() || state.length() > MAX_TRACESTATE_CHARS || !printable(state))) {
            state = null;
        }
        return new TraceContext(traceparent.trim(), state);
    }

    /**
     * version-traceid-parentid-flags, lower-case hex: 2-32-16-2. Version ff is invalid; a later
     * version may append fields after the flags, which are kept as sent.
     */
    static boolean validParent(String value) {
        if (value.length() < 55 || value.length() > 512 || (value.length() > 55 && value.charAt(55) != '-')) {
            return false;
        }
        if (value.charAt(2) != '-' || value.charAt(35) != '-' || value.charAt(52) != '-') {
            return false;
        }
        String version = value.substring(0, 2);
        String traceId = value.substring(3, 35);
        String parentId = value.substring(36, 52);
        String flags = value.substring(53, 55);
        if (!hex(version) || version.equals("ff") || !hex(traceId) || !hex(parentId) || !hex(flags)) {
            return false;
        }
        if (version.equals("00") && value.length() != 55) {
            return false;
        }
        return !traceId.equals(ZERO_TRACE_ID) && !parentId.equals(ZERO_PARENT_ID) && printable(value);
    }

    private static boolean hex(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                return false;
            }
        }
        return true;
    }

    private static boolean printable(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return false;
            }
        }
        return true;
    }
}
