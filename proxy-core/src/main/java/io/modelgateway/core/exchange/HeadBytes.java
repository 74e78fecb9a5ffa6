package io.modelgateway.core.exchange;

/**
 * Steps over the bytes of an HTTP head held in an array, shared by the gateway's two head readers (the client
 * request's fast path and the upstream answer's decoder): a field value's optional whitespace is spaces and tabs
 * (RFC 9110 section 5.5), skipped before the value and trimmed after it, as Netty's decoders do.
 */
public final class HeadBytes {
    private HeadBytes() {
    }

    /** The first index from {@code from} (before {@code end}) that is not a space or a tab, else {@code end}. */
    public static int skipBlanks(byte[] h, int from, int end) {
        while (from < end && (h[from] == ' ' || h[from] == '\t')) {
            from++;
        }
        return from;
    }

    /** {@code end} moved back past spaces and tabs, not below {@code start}. */
    public static int trimEnd(byte[] h, int start, int end) {
        while (end > start && (h[end - 1] == ' ' || h[end - 1] == '\t')) {
            end--;
        }
        return end;
    }
}
