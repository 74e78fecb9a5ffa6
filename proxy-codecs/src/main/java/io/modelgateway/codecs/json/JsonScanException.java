package io.modelgateway.codecs.json;

import java.io.IOException;

/**
 * A body {@link JsonScanner} refuses: not JSON as RFC 8259 writes it, or past one of the scanner's limits (nesting
 * depth, digits in a number). The message names what was expected and the byte offset, never the body's content,
 * so it can go into a 400 as it is.
 */
public final class JsonScanException extends IOException {
    private static final long serialVersionUID = 1L;

    private final boolean limit;
    private final int offset;

    JsonScanException(String what, int offset, boolean limit) {
        super(what + " at byte " + offset);
        this.limit = limit;
        this.offset = offset;
    }

    /** Whether the body broke a limit (too deep, a number too long) rather than the grammar. */
    public boolean isLimit() {
        return limit;
    }

    /** Offset of the offending byte from the start of the scanned range. */
    public int offset() {
        return offset;
    }

    /**
     * No stack trace: a refused body is an expected outcome on a hot path that anyone can reach with a bad request,
     * and the message already says where the problem is.
     */
    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }
}
