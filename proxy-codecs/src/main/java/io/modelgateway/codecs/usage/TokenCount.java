package io.modelgateway.codecs.usage;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.json.JsonScanException;
import io.modelgateway.codecs.json.JsonScanner;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;

/**
 * Reads one token count an upstream reported, in any of the forms the gateway meets it (raw bytes, a scanner, a
 * streaming parser, a tree node), and decides whether to believe it. A count is believed when it is a whole number from
 * 0 to {@link #MAX}; {@code 12.0} and {@code 1e3} are whole numbers and pass, {@code 12.5}, {@code -5}, {@code 1e18}
 * and a number longer than a long do not. Every reader of usage in the codecs goes through here, so the accounting
 * (which then falls back to the gateway's own estimate) and the translated answers (which show such a count as absent)
 * agree on what a count is.
 */
public final class TokenCount {
    /**
     * The most tokens one count of one exchange may say: far above any model's context and output (a few million
     * today), far below where sums of a few counts could overflow. It is also the config's largest
     * {@code tokens_per_minute}.
     */
    public static final long MAX = 100_000_000L;
    /** The value is not a number (null, a string, an object…): the field says nothing. */
    public static final long ABSENT = -1;
    /** The value is a number, but not a count to believe. */
    public static final long IMPLAUSIBLE = -2;

    private static final BigDecimal MAX_DECIMAL = BigDecimal.valueOf(MAX);

    private TokenCount() {
    }

    /** A count from an integer: itself within [0, {@link #MAX}], else {@link #IMPLAUSIBLE}. */
    public static long of(long n) {
        return n >= 0 && n <= MAX ? n : IMPLAUSIBLE;
    }

    /** A count from a floating-point number: a whole value within range, else {@link #IMPLAUSIBLE}. */
    public static long of(double d) {
        // NaN fails the first comparison; -0.0 passes it and is 0.
        return d >= 0 && d <= MAX && d == Math.rint(d) ? (long) d : IMPLAUSIBLE;
    }

    /** A count from an exact decimal: a whole value within range, else {@link #IMPLAUSIBLE}. */
    public static long of(BigDecimal d) {
        if (d.signum() == 0) {
            return 0;
        }
        // Range first, on precision and scale only: 1e-999999999 must not be scaled to a whole number to find out.
        if (d.signum() < 0 || (long) d.precision() - d.scale() < 1 || d.compareTo(MAX_DECIMAL) > 0) {
            return IMPLAUSIBLE; // negative, below 1, or above the ceiling
        }
        // 1 <= d <= MAX: the scale is below the number of digits written, so this rounding is cheap.
        BigDecimal whole = d.setScale(0, RoundingMode.DOWN);
        return whole.compareTo(d) == 0 ? whole.longValue() : IMPLAUSIBLE;
    }

    /**
     * The count of the value token {@code t} the parser is on; a non-number value is skipped whole and is
     * {@link #ABSENT}.
     */
    public static long of(JsonParser p, JsonToken t) throws IOException {
        if (t == JsonToken.VALUE_NUMBER_INT) {
            // A number longer than a long is a BigInteger, which getLongValue would refuse with an exception.
            return p.getNumberType() == JsonParser.NumberType.BIG_INTEGER ? IMPLAUSIBLE : of(p.getLongValue());
        }
        if (t == JsonToken.VALUE_NUMBER_FLOAT) {
            try {
                return of(p.getDecimalValue());
            } catch (NumberFormatException e) {
                return IMPLAUSIBLE; // an exponent past an int: the token itself was read, the parser goes on
            }
        }
        p.skipChildren();
        return ABSENT;
    }

    /**
     * The count of the value token {@code t} the scanner is on, read from the token's bytes as
     * {@link #of(byte[], int, int)} reads them; a non-number value is skipped whole and is {@link #ABSENT}.
     */
    public static long of(JsonScanner s, JsonToken t) throws JsonScanException {
        if (t == JsonToken.VALUE_NUMBER_INT || t == JsonToken.VALUE_NUMBER_FLOAT) {
            int at = s.arrayOffset();
            return of(s.array(), at + s.tokenStart(), at + s.tokenEnd());
        }
        s.skipValue();
        return ABSENT;
    }

    /** The count a tree node holds; a missing or non-number node is {@link #ABSENT}. */
    public static long of(JsonNode n) {
        if (n == null || !n.isNumber()) {
            return ABSENT;
        }
        if (n.isIntegralNumber()) {
            return n.canConvertToLong() ? of(n.longValue()) : IMPLAUSIBLE;
        }
        return n.isBigDecimal() ? of(n.decimalValue()) : of(n.doubleValue());
    }

    /**
     * The count written in {@code bytes[from, to)}, the characters of one JSON number ({@code -}, digits, fraction,
     * exponent); anything else there is {@link #IMPLAUSIBLE}. Plain digits, the form providers use, take a loop
     * that never overflows; a fraction or an exponent, never seen from a sane upstream, is read exactly.
     */
    public static long of(byte[] bytes, int from, int to) {
        int i = from;
        boolean negative = i < to && bytes[i] == '-';
        if (negative) {
            i++;
        }
        int digits = i;
        long n = 0;
        while (i < to && bytes[i] >= '0' && bytes[i] <= '9') {
            if (n <= MAX) { // stops growing past the ceiling: n * 10 + 9 stays far from overflow
                n = n * 10 + (bytes[i] - '0');
            }
            i++;
        }
        if (i == to && i > digits) {
            return negative && n != 0 ? IMPLAUSIBLE : of(n);
        }
        try {
            return of(new BigDecimal(new String(bytes, from, to - from, StandardCharsets.US_ASCII)));
        } catch (NumberFormatException e) {
            return IMPLAUSIBLE; // not a number at all ("1.2.3", "-", an exponent past an int)
        }
    }
}
