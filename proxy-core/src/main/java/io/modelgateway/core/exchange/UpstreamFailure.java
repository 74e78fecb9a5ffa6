package io.modelgateway.core.exchange;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;

/**
 * How one attempt's upstream failed before anything of the answer reached the caller, as reported to an
 * {@link AttemptHook}: the routing layer decides from it whether to try again, and where.
 *
 * @param kind             what went wrong
 * @param status           the upstream's HTTP status for {@link Kind#STATUS}; 0 otherwise
 * @param retryAfterMillis the upstream's {@code retry-after-ms} or {@code Retry-After}, in milliseconds; -1 when
 *                         it sent none (or one that could not be read)
 */
public record UpstreamFailure(Kind kind, int status, long retryAfterMillis) {

    public enum Kind {
        /** The connection could not be made (refused, unreachable, TLS failed). */
        CONNECT,
        /** The connection was not accepted within {@code connect_timeout_ms}. */
        CONNECT_TIMEOUT,
        /** The upstream closed or reset the connection before its answer began. */
        LOST,
        /** The upstream's answer did not begin within {@code timeouts.first_byte_ms}. */
        FIRST_BYTE_TIMEOUT,
        /**
         * The upstream's answer broke HTTP before anything reached the caller: a malformed head or body framing, or a
         * {@code 101 Switching Protocols}. Like a lost connection: the connection is closed and the attempt may be
         * tried again.
         */
        PROTOCOL,
        /** The upstream answered with an error status ({@link #status}). */
        STATUS
    }

    public static final UpstreamFailure CONNECT_FAILED = new UpstreamFailure(Kind.CONNECT, 0, -1);
    public static final UpstreamFailure CONNECT_TIMED_OUT = new UpstreamFailure(Kind.CONNECT_TIMEOUT, 0, -1);
    public static final UpstreamFailure LOST_BEFORE_ANSWER = new UpstreamFailure(Kind.LOST, 0, -1);
    public static final UpstreamFailure FIRST_BYTE_TIMED_OUT = new UpstreamFailure(Kind.FIRST_BYTE_TIMEOUT, 0, -1);
    public static final UpstreamFailure PROTOCOL_ERROR = new UpstreamFailure(Kind.PROTOCOL, 0, -1);

    public static UpstreamFailure status(int status, long retryAfterMillis) {
        return new UpstreamFailure(Kind.STATUS, status, retryAfterMillis);
    }

    /**
     * The wait an upstream asks for, in milliseconds, as both SDK families read it (contract 2.3):
     * {@code retry-after-ms} first, then {@code Retry-After} in seconds or as an HTTP date; -1 when neither is
     * there or readable.
     */
    public static long retryAfterMillis(HttpHeaders headers) {
        return retryAfterMillis(headers.get("retry-after-ms"), headers.get(HttpHeaderNames.RETRY_AFTER),
                System.currentTimeMillis());
    }

    /** As above, from the two header values (either may be null) and the wall clock now. */
    public static long retryAfterMillis(String millis, String seconds, long nowMillis) {
        if (millis != null) {
            try {
                double ms = Double.parseDouble(millis.trim());
                if (ms >= 0 && ms < Long.MAX_VALUE) {
                    return (long) Math.ceil(ms);
                }
            } catch (NumberFormatException e) {
                // fall through to Retry-After
            }
        }
        if (seconds == null) {
            return -1;
        }
        String s = seconds.trim();
        try {
            long n = Long.parseLong(s);
            return n < 0 ? -1 : Math.min(n, Long.MAX_VALUE / 1000) * 1000;
        } catch (NumberFormatException e) {
            // an HTTP date
        }
        try {
            long at = ZonedDateTime.parse(s, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli();
            return Math.max(0, at - nowMillis);
        } catch (DateTimeParseException e) {
            return -1;
        }
    }
}
