package io.modelgateway.core.config;

/**
 * Glob matching with {@code *} (any run of characters, also none) and {@code ?} (exactly one).
 * Works on the pattern string directly — no regex, no allocation — so it is cheap enough to run per
 * request against the handful of patterns a key or a provider carries.
 */
final class Glob {

    private Glob() {
    }

    static boolean isGlob(String pattern) {
        return pattern.indexOf('*') >= 0 || pattern.indexOf('?') >= 0;
    }

    static boolean matches(String pattern, String text) {
        return matches(pattern, text, false);
    }

    /**
     * As {@link #matches(String, String)}; with {@code foldCase}, ASCII letters of {@code text} are compared
     * lower-cased (the pattern must already be lower case), without allocating a lower-cased copy.
     */
    static boolean matches(String pattern, CharSequence text, boolean foldCase) {
        int p = 0;
        int t = 0;
        int star = -1; // position of the last '*' seen in the pattern
        int resume = 0; // text position that '*' currently stretches to
        while (t < text.length()) {
            char c = text.charAt(t);
            if (foldCase && c >= 'A' && c <= 'Z') {
                c = (char) (c + ('a' - 'A'));
            }
            if (p < pattern.length() && (pattern.charAt(p) == '?' || pattern.charAt(p) == c)) {
                p++;
                t++;
            } else if (p < pattern.length() && pattern.charAt(p) == '*') {
                star = p++;
                resume = t;
            } else if (star >= 0) {
                // Backtrack: the last '*' swallows one more character. At worst O(pattern x text),
                // never exponential, because only the last '*' is ever revisited.
                p = star + 1;
                t = ++resume;
            } else {
                return false;
            }
        }
        while (p < pattern.length() && pattern.charAt(p) == '*') {
            p++;
        }
        return p == pattern.length();
    }
}
