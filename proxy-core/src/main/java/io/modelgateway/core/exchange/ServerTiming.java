package io.modelgateway.core.exchange;

import io.netty.util.AsciiString;

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

    /** The header's value for {@code record} with the head going out at {@code nowNanos}. */
    public static String value(ExchangeRecord record, long nowNanos) {
        long upstream = record.upstreamLatencyNanos();
        long gateway = Math.max(0, nowNanos - record.startNanos() - Math.max(0, upstream));
        StringBuilder sb = new StringBuilder(48).append("gateway;dur=");
        millis(sb, gateway);
        if (upstream >= 0) {
            millis(sb.append(", upstream;dur="), upstream);
        }
        return sb.toString();
    }

    /** Non-negative nanoseconds as milliseconds with exactly three decimals, without floating point. */
    static void millis(StringBuilder sb, long nanos) {
        long micros = nanos / 1000;
        sb.append(micros / 1000).append('.');
        int frac = (int) (micros % 1000);
        if (frac < 100) {
            sb.append('0');
        }
        if (frac < 10) {
            sb.append('0');
        }
        sb.append(frac);
    }
}
