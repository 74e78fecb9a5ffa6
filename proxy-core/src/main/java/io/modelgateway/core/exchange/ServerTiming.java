package io.modelgateway.core.exchange;

import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;

/**
 * The {@code Server-Timing} header of every answer to an API request: {@code gateway;dur=G} — the gateway's own time
 * to the response head, that is the time from the request to the head less the upstream's part — and, when an
 * upstream (or the in-process simulator) was asked, {@code upstream;dur=U}: from sending its request to its response
 * head (the last attempt's). Milliseconds with three decimals. A load test subtracts G from what it measured to see
 * the upstream's share, request by request.
 */
public final class ServerTiming {
    public static final AsciiString SERVER_TIMING = AsciiString.cached("server-timing");

    private ServerTiming() {
    }

    private static final byte[] GATEWAY = "gateway;dur=".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] UPSTREAM = ", upstream;dur=".getBytes(StandardCharsets.US_ASCII);
    /**
     * The header's value for {@code record} with the head going out at {@code nowNanos}: ASCII bytes wrapped as they
     * were written (one array, no string), which the encoder copies as they are.
     */
    public static AsciiString value(ExchangeRecord record, long nowNanos) {
        long upstream = record.upstreamLatencyNanos();
        long gateway = Math.max(0, nowNanos - record.startNanos() - Math.max(0, upstream));
        // The array is exactly as long as the value: it is the header's bytes, held until the head is written.
        int length = GATEWAY.length + millisLength(gateway)
                + (upstream >= 0 ? UPSTREAM.length + millisLength(upstream) : 0);
        byte[] b = new byte[length];
        System.arraycopy(GATEWAY, 0, b, 0, GATEWAY.length);
        int n = millis(b, GATEWAY.length, gateway);
        if (upstream >= 0) {
            System.arraycopy(UPSTREAM, 0, b, n, UPSTREAM.length);
            n = millis(b, n + UPSTREAM.length, upstream);
        }
        return new AsciiString(b, 0, n, false);
    }

    /**
     * Non-negative nanoseconds as milliseconds with exactly three decimals, without floating point, into {@code b}
     * at {@code at}; returns the index after it.
     */
    static int millis(byte[] b, int at, long nanos) {
        long micros = nanos / 1000;
        int end = digits(b, at, micros / 1000);
        b[end] = '.';
        int frac = (int) (micros % 1000);
        b[end + 1] = (byte) ('0' + frac / 100);
        b[end + 2] = (byte) ('0' + frac / 10 % 10);
        b[end + 3] = (byte) ('0' + frac % 10);
        return end + 4;
    }

    /** How many bytes {@link #millis} writes for {@code nanos}. */
    static int millisLength(long nanos) {
        return DecimalText.digitCount(nanos / 1_000_000) + 4;
    }

    /** The decimal digits of {@code v} (not negative) at {@code at}; returns the index after them. */
    private static int digits(byte[] b, int at, long v) {
        int count = DecimalText.digitCount(v);
        int i = at + count;
        do {
            b[--i] = (byte) ('0' + v % 10);
            v /= 10;
        } while (v > 0);
        return at + count;
    }
}
