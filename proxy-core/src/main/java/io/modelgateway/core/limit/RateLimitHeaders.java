package io.modelgateway.core.limit;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.core.exchange.DecimalText;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import io.netty.util.concurrent.FastThreadLocal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The rate-limit and retry headers of contract 2.3, in the formats the official SDKs and dashboards
 * parse: OpenAI style resets as Go durations ({@code 6m0s}), Anthropic style resets as RFC 3339 instants.
 */
public final class RateLimitHeaders {
    static final AsciiString RETRY_AFTER_MS = AsciiString.cached("retry-after-ms");
    static final AsciiString SHOULD_RETRY = AsciiString.cached("x-should-retry");
    /** 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the instants {@link #rfc3339} writes itself. */
    private static final long FIRST_SECOND = -62_167_219_200L;
    private static final long LAST_SECOND = 253_402_300_799L;

    // [style][family]: 0 = OpenAI, 1 = Anthropic; 0 = requests, 1 = tokens. Cached AsciiStrings: Netty's
    // headers hash and compare them without re-encoding.
    private static final AsciiString[][] LIMIT = {
        {AsciiString.cached("x-ratelimit-limit-requests"), AsciiString.cached("x-ratelimit-limit-tokens")},
        {AsciiString.cached("anthropic-ratelimit-requests-limit"),
            AsciiString.cached("anthropic-ratelimit-tokens-limit")}};
    private static final AsciiString[][] REMAINING = {
        {AsciiString.cached("x-ratelimit-remaining-requests"), AsciiString.cached("x-ratelimit-remaining-tokens")},
        {AsciiString.cached("anthropic-ratelimit-requests-remaining"),
            AsciiString.cached("anthropic-ratelimit-tokens-remaining")}};
    private static final AsciiString[][] RESET = {
        {AsciiString.cached("x-ratelimit-reset-requests"), AsciiString.cached("x-ratelimit-reset-tokens")},
        {AsciiString.cached("anthropic-ratelimit-requests-reset"),
            AsciiString.cached("anthropic-ratelimit-tokens-reset")}};

    /** The names whose values change with every answer (remaining and reset, both styles and families). */
    public static List<AsciiString> changingNames() {
        List<AsciiString> names = new ArrayList<>(8);
        for (AsciiString[][] table : new AsciiString[][][] {REMAINING, RESET}) {
            for (AsciiString[] style : table) {
                names.addAll(List.of(style));
            }
        }
        return names;
    }

    private RateLimitHeaders() {
    }

    /**
     * One family ({@code tokens} true: the tokens family, else requests).
     *
     * @param remaining  clamped at 0: a negative count (a level above a limit lowered by a reload) only confuses
     *                   clients
     * @param resetNanos until the bucket is full again; a family is a per-minute limit, so never more than a
     *                   minute (the buckets keep to that; the bound here makes the header say so whatever happens)
     * @param epochMillis the wall clock now, for the Anthropic reset instant
     */
    static void writeFamily(HttpHeaders headers, ApiStyle style, boolean tokens, long limit, long remaining,
            long resetNanos, long epochMillis) {
        int s = style == ApiStyle.ANTHROPIC ? 1 : 0;
        int f = tokens ? 1 : 0;
        headers.set(LIMIT[s][f], limitText(limit));
        headers.set(REMAINING[s][f], new DecimalText(Math.max(0, remaining)));
        long resetMillis = ceilDiv(Math.min(TokenBucket.WINDOW_NANOS, Math.max(0, resetNanos)), 1_000_000);
        headers.set(RESET[s][f], s == 1 ? instantText(epochMillis + resetMillis) : durationText(resetMillis));
    }

    /**
     * The decimal text of a limit. The same few limits (those of the keys and models in use) go out on every answer,
     * so each event loop keeps the texts of the last ones it wrote, eight places picked by the value: no String per
     * answer for a number that has not changed.
     */
    static AsciiString limitText(long limit) {
        LimitTexts t = LIMIT_TEXTS.get();
        int slot = (int) ((limit * 0x9E3779B97F4A7C15L) >>> 61);
        AsciiString text = t.texts[slot];
        if (text == null || t.values[slot] != limit) {
            text = new AsciiString(Long.toString(limit));
            t.values[slot] = limit;
            t.texts[slot] = text;
        }
        return text;
    }

    private static final class LimitTexts {
        final long[] values = new long[8];
        final AsciiString[] texts = new AsciiString[8];
    }

    private static final FastThreadLocal<LimitTexts> LIMIT_TEXTS = new FastThreadLocal<>() {
        @Override
        protected LimitTexts initialValue() {
            return new LimitTexts();
        }
    };

    /** {@code Retry-After} in whole seconds (rounded up, at least 1) and {@code retry-after-ms}, which SDKs read first. */
    static void writeRetry(HttpHeaders headers, long retryAfterMillis, boolean shouldRetry) {
        headers.set(HttpHeaderNames.RETRY_AFTER, Long.toString(Math.max(1, ceilDiv(retryAfterMillis, 1000))));
        headers.set(RETRY_AFTER_MS, Long.toString(retryAfterMillis));
        if (!shouldRetry) {
            headers.set(SHOULD_RETRY, "false");
        }
    }

    /**
     * {@link #goDuration} as a header value: below a second (what a busy bucket far from its limit says, {@code 1ms},
     * on every answer) one shared text per millisecond value, made the first time it is needed; else a new String.
     */
    static CharSequence durationText(long millis) {
        if (millis <= 0 || millis >= MILLIS_TEXTS.length) {
            return goDuration(millis);
        }
        AsciiString text = MILLIS_TEXTS[(int) millis];
        if (text == null) {
            // Racy but benign: two loops may each make the same immutable text; either one is right.
            text = new AsciiString(goDuration(millis));
            MILLIS_TEXTS[(int) millis] = text;
        }
        return text;
    }

    private static final AsciiString[] MILLIS_TEXTS = new AsciiString[1000];

    /**
     * A duration the way Go's {@code time.Duration.String} prints it, at millisecond precision: {@code 0s},
     * {@code 12ms}, {@code 1.5s}, {@code 1m30s}, {@code 6m0s}, {@code 1h0m0s}. OpenAI's reset headers use this
     * format, and clients written against them parse it.
     */
    static String goDuration(long millis) {
        if (millis <= 0) {
            return "0s";
        }
        if (millis < 1000) {
            return millis + "ms";
        }
        StringBuilder sb = new StringBuilder(16);
        long hours = millis / 3_600_000;
        long minutes = millis / 60_000 % 60;
        if (hours > 0) {
            sb.append(hours).append('h');
        }
        if (hours > 0 || minutes > 0) {
            sb.append(minutes).append('m');
        }
        sb.append(millis / 1000 % 60);
        int fraction = (int) (millis % 1000);
        if (fraction != 0) {
            sb.append('.');
            // Three digits, trailing zeros dropped, as Go does: 1.5s, 1.05s, 1.005s.
            int digits = fraction % 100 == 0 ? 1 : fraction % 10 == 0 ? 2 : 3;
            String padded = Integer.toString(1000 + fraction).substring(1);
            sb.append(padded, 0, digits);
        }
        return sb.append('s').toString();
    }

    /**
     * {@link #rfc3339} of {@code epochMillis}, kept by each event loop for the last few seconds it wrote: the reset
     * instants of a busy key are the current second or the next over and over (two per Anthropic-style answer), so
     * most answers reuse the text instead of a String and its bytes each.
     */
    static AsciiString instantText(long epochMillis) {
        long seconds = Math.floorDiv(epochMillis + 999, 1000); // the rounding rfc3339 writes
        InstantTexts t = INSTANT_TEXTS.get();
        int slot = (int) (seconds & (InstantTexts.SLOTS - 1));
        AsciiString text = t.texts[slot];
        if (text == null || t.seconds[slot] != seconds) {
            text = new AsciiString(rfc3339(epochMillis));
            t.seconds[slot] = seconds;
            t.texts[slot] = text;
        }
        return text;
    }

    private static final class InstantTexts {
        static final int SLOTS = 4;
        final long[] seconds = new long[SLOTS];
        final AsciiString[] texts = new AsciiString[SLOTS];
    }

    private static final FastThreadLocal<InstantTexts> INSTANT_TEXTS = new FastThreadLocal<>() {
        @Override
        protected InstantTexts initialValue() {
            return new InstantTexts();
        }
    };

    /**
     * An RFC 3339 UTC instant with whole seconds ({@code 2026-08-21T12:41:00Z}), rounded up: what
     * {@code Instant.toString} prints, written by hand for years 0000–9999 (two per Anthropic-style answer; the JDK's
     * formatter took a microsecond per request in the stream profiles). The date from the day count is the usual
     * civil-calendar conversion: days counted from 0000-03-01, so that the leap day ends a year, in 400-year eras.
     */
    static String rfc3339(long epochMillis) {
        long seconds = Math.floorDiv(epochMillis + 999, 1000);
        if (seconds < FIRST_SECOND || seconds > LAST_SECOND) {
            return Instant.ofEpochSecond(seconds).toString();
        }
        long days = Math.floorDiv(seconds, 86_400);
        int secondOfDay = (int) (seconds - days * 86_400);
        long z = days + 719_468; // days since 0000-03-01
        long era = Math.floorDiv(z, 146_097);
        int dayOfEra = (int) (z - era * 146_097);
        int yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365;
        int dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100);
        int monthFromMarch = (5 * dayOfYear + 2) / 153;
        int day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1;
        int month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
        int year = (int) (era * 400 + yearOfEra) + (month <= 2 ? 1 : 0);
        byte[] b = {0, 0, 0, 0, '-', 0, 0, '-', 0, 0, 'T', 0, 0, ':', 0, 0, ':', 0, 0, 'Z'};
        digits(b, 0, year / 100);
        digits(b, 2, year % 100);
        digits(b, 5, month);
        digits(b, 8, day);
        digits(b, 11, secondOfDay / 3600);
        digits(b, 14, secondOfDay / 60 % 60);
        digits(b, 17, secondOfDay % 60);
        return new String(b, StandardCharsets.US_ASCII);
    }

    private static void digits(byte[] b, int at, int twoDigits) {
        b[at] = (byte) ('0' + twoDigits / 10);
        b[at + 1] = (byte) ('0' + twoDigits % 10);
    }

    static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }
}
