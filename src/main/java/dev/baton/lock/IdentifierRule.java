package dev.baton.lock;

/**
 * Which characters an identifier (lcid, request id, token) may hold: ASCII letters and digits plus
 * a few punctuation marks, from 1 to a maximum length. A table lookup per character: these checks
 * run on every call, where a regular expression's matcher cost more than the rest of validation.
 */
record IdentifierRule(boolean[] allowed, int maxLength) {

    IdentifierRule(String punctuation, int maxLength) {
        this(table(punctuation), maxLength);
    }

    boolean matches(String value) {
        int length = value.length();
        if (length == 0 || length > maxLength) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            char c = value.charAt(i);
            if (c >= allowed.length || !allowed[c]) {
                return false;
            }
        }
        return true;
    }

    private static boolean[] table(String punctuation) {
        boolean[] allowed = new boolean[128];
        for (char c = '0'; c <= '9'; c++) {
            allowed[c] = true;
        }
        for (char c = 'a'; c <= 'z'; c++) {
            allowed[c] = true;
            allowed[Character.toUpperCase(c)] = true;
        }
        punctuation.chars().forEach(c -> allowed[c] = true);
        return allowed;
    }
}
