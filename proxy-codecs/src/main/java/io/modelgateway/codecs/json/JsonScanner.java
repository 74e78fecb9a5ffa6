package io.modelgateway.codecs.json;

import com.fasterxml.jackson.core.JsonToken;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * A strict JSON (RFC 8259) pull scanner over a range of a byte array, written for {@link RequestPeek}: every request
 * body is read once on the hot path, so a scanner is made once per thread and {@link #reset} for each body, and
 * reading a body allocates nothing but the Strings asked for (a member name seen before is not even that: see
 * {@link #currentName}). It hands out jackson-core's {@link JsonToken} constants, which are only an enum, so the
 * peek reads as it did on a Jackson parser.
 *
 * <p>It accepts what jackson-core's default parser accepts and refuses the rest: no comments, single quotes, unquoted
 * names, trailing commas, NaN or Infinity, leading zeros, {@code +1}, {@code .5} or {@code 1.}; no raw control
 * character inside a string and only the escapes of RFC 8259 (a <code>&#92;u</code> escape may name a lone surrogate).
 * Strings must be well-formed UTF-8 (no overlong forms, no encoded surrogates, nothing past U+10FFFF), also those only
 * skipped. A UTF-8 byte order mark at the very start is skipped (when something follows it); UTF-16 and UTF-32 bodies
 * are refused, because every offset the scanner reports is a byte offset into the UTF-8 body. Nesting deeper than the
 * depth limit and numbers with more digits than the digit limit are refused as limits ({@link
 * JsonScanException#isLimit}); digits are counted as Jackson counts them: the integer, fraction and exponent digits
 * together, without sign, point or exponent marker.
 *
 * <p>Errors are found where a Jackson parser finds them, because the peek's choice between a validation error and a
 * syntax error depends on it: a string's content is checked when the string is read ({@link #text}, {@link
 * #textLength}, {@link #textEquals}, {@link #tokenEnd}) or skipped (the next {@link #next}); a member's name, its
 * colon and the first token of its value (all of a number or a literal) are checked before the {@code FIELD_NAME}
 * is returned; a separator after a value is checked by the following {@link #next}.
 *
 * <p>Offsets are counted from the start of the range given to {@link #reset}, the byte order mark included. After a
 * {@link JsonScanException} the scanner must be reset before it is used again. Not thread-safe.
 */
public final class JsonScanner {
    private static final byte[] EMPTY = new byte[0];

    /**
     * What a byte inside a string needs: nothing, it ends the string, it starts an escape, it is refused, or it starts
     * a multi-byte character.
     */
    private static final byte PLAIN = 0;
    private static final byte QUOTE = 1;
    private static final byte BACKSLASH = 2;
    private static final byte CONTROL = 3;
    private static final byte MULTI = 4;
    private static final byte[] STRING_BYTES = new byte[256];
    /** The value of a hex digit, -1 for any other byte. */
    private static final byte[] HEX = new byte[256];

    static {
        for (int c = 0; c < 256; c++) {
            STRING_BYTES[c] = c < 0x20 ? CONTROL : c == '"' ? QUOTE : c == '\\' ? BACKSLASH : c >= 0x80 ? MULTI : PLAIN;
            HEX[c] = (byte) (c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1);
        }
    }

    /** Eight bytes of a string are read as one long while none of them needs a closer look. */
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;

    private static final byte[] TRUE = {'t', 'r', 'u', 'e'};
    private static final byte[] FALSE = {'f', 'a', 'l', 's', 'e'};
    private static final byte[] NULL = {'n', 'u', 'l', 'l'};

    /** String flags: the string holds an escape, or a byte of a multi-byte character. */
    private static final int ESCAPED = 1;
    private static final int NON_ASCII = 2;

    /**
     * The names cache: a small open-addressed table from a name's bytes to its String, so that the names a body
     * repeats (and the next body on this thread repeats again) cost no String. Only short names written without
     * escapes are kept; a full table gives way at a name's home slot, so a body of endless distinct names costs a
     * String per name, as it would without the cache, and never grows the table.
     */
    private static final int NAME_BITS = 8;
    private static final int NAME_SLOTS = 1 << NAME_BITS;
    private static final int NAME_MAX = 32;
    private static final int NAME_PROBES = 4;
    /** Largest char buffer kept for decoding escaped strings; a longer string decodes through a one-off array. */
    private static final int MAX_KEPT_CHARS = 1 << 16;

    private final int maxDepth;
    private final int maxNumberDigits;
    /** Whether the container at each depth (1 is the root value's) is an object. */
    private final boolean[] objects;
    private final byte[] nameBytes = new byte[NAME_SLOTS * NAME_MAX];
    private final byte[] nameLengths = new byte[NAME_SLOTS];
    private final String[] names = new String[NAME_SLOTS];
    private char[] chars = new char[64];

    private byte[] a = EMPTY;
    private int base;
    private int end;
    /** Where scanning goes on: past the current token, or just past the opening quote of a string not yet read. */
    private int pos;
    private int depth;
    /** Whether the innermost container has no entry yet (so the next entry needs no comma). */
    private boolean empty;
    private boolean rootSeen;

    private JsonToken token;
    /** Array indexes of the current token's first byte and of the byte just past it (-1 for a string not yet read). */
    private int start;
    private int tokenEnd;
    /** The current token is a string whose content has not been scanned yet. */
    private boolean stringOpen;
    /** {@link #ESCAPED} and {@link #NON_ASCII} of the last string scanned. */
    private int stringFlags;

    /** A member's value, scanned with its name and returned by the next {@link #next}. */
    private JsonToken pending;
    private int pendingStart;
    private int pendingEnd;

    /** The last member name: its opening quote, the byte past its closing quote, its flags, its String once made. */
    private int nameStart = -1;
    private int nameEnd;
    private int nameFlags;
    private String name;

    /**
     * A scanner that refuses containers nested deeper than {@code maxDepth} (the root object or array is depth 1)
     * and numbers of more than {@code maxNumberDigits} digits.
     */
    public JsonScanner(int maxDepth, int maxNumberDigits) {
        if (maxDepth < 1 || maxNumberDigits < 1) {
            throw new IllegalArgumentException("limits must be positive");
        }
        this.maxDepth = maxDepth;
        this.maxNumberDigits = maxNumberDigits;
        this.objects = new boolean[maxDepth + 1];
    }

    /** Starts scanning {@code len} bytes of {@code bytes} from {@code off}; the array is read in place, not written. */
    public void reset(byte[] bytes, int off, int len) {
        Objects.checkFromIndexSize(off, len, bytes.length);
        a = bytes;
        base = off;
        end = off + len;
        pos = off;
        // A byte order mark alone is not skipped: the body is then one stray byte sequence, refused as Jackson did.
        if (len > 3 && bytes[off] == (byte) 0xEF && bytes[off + 1] == (byte) 0xBB && bytes[off + 2] == (byte) 0xBF) {
            pos += 3;
        }
        depth = 0;
        empty = false;
        rootSeen = false;
        token = null;
        start = off;
        tokenEnd = off;
        stringOpen = false;
        pending = null;
        nameStart = -1;
        name = null;
    }

    /** Lets go of the array last scanned (a thread's scanner outlives the body it read). */
    public void clear() {
        reset(EMPTY, 0, 0);
    }

    /**
     * The next token, or null at the end of the input once the root value is complete (or when the input holds only
     * blanks). Anything but blanks after the root value is refused.
     */
    public JsonToken next() throws JsonScanException {
        if (token == JsonToken.FIELD_NAME) {
            return takePending();
        }
        if (stringOpen) {
            finishString();
        }
        int p = skipBlanks(pos);
        if (p >= end) {
            pos = p;
            if (depth > 0) {
                throw syntax(objects[depth] ? "unexpected end of input, expected '}'"
                        : "unexpected end of input, expected ']'", p);
            }
            return token = null;
        }
        int c = a[p] & 0xFF;
        if (depth == 0) {
            if (rootSeen) {
                throw syntax("unexpected data after the JSON value", p);
            }
            rootSeen = true;
            return value(c, p);
        }
        boolean inObject = objects[depth];
        if (c == '}' || c == ']') {
            if ((c == '}') != inObject) {
                throw syntax(separatorExpected(inObject), p);
            }
            depth--;
            empty = false; // the enclosing container, if any, holds the one just closed
            start = p;
            tokenEnd = pos = p + 1;
            return token = inObject ? JsonToken.END_OBJECT : JsonToken.END_ARRAY;
        }
        if (!empty) {
            if (c != ',') {
                throw syntax(separatorExpected(inObject), p);
            }
            p = skipBlanks(p + 1);
            if (p >= end) {
                throw syntax(inObject ? "unexpected end of input, expected a member name"
                        : "unexpected end of input, expected a value", p);
            }
            c = a[p] & 0xFF;
        }
        empty = false;
        return inObject ? member(c, p) : value(c, p);
    }

    /**
     * Whether only blanks are left after what has been read: true at a clean end of the input once the root value
     * is complete. Reads nothing it would refuse.
     */
    public boolean atEnd() {
        return depth == 0 && !stringOpen && token != JsonToken.FIELD_NAME && skipBlanks(pos) >= end;
    }

    public JsonToken token() {
        return token;
    }

    /**
     * Reads past the value whose first token is the current one: to the end of an object or array, nothing for a
     * scalar (a string's content is checked by the next {@link #next}, as always).
     */
    public void skipValue() throws JsonScanException {
        if (token != JsonToken.START_OBJECT && token != JsonToken.START_ARRAY) {
            return;
        }
        int outside = depth - 1;
        while (depth > outside) {
            next(); // refuses an end of input inside the value
        }
    }

    /** The array given to {@link #reset}: the bytes of a token are at {@link #arrayOffset()} plus its offsets. */
    public byte[] array() {
        return a;
    }

    /** Where in {@link #array()} the range given to {@link #reset} starts: offset 0 of every offset reported. */
    public int arrayOffset() {
        return base;
    }

    /** Offset of the current token's first byte: a string's or a name's opening quote, a number's sign or digit. */
    public int tokenStart() {
        return start - base;
    }

    /** Offset just past the current token (a string's closing quote); reads a string to its end if it has not been. */
    public int tokenEnd() throws JsonScanException {
        if (stringOpen) {
            finishString();
        }
        return tokenEnd - base;
    }

    /** Offset of the opening quote of the last member name, still the current member's while its value is read. */
    public int nameStart() {
        return nameStart < 0 ? -1 : nameStart - base;
    }

    /**
     * The last member name. A short name written without escapes comes from the names cache, the same String each
     * time the scanner meets those bytes again; any other name is decoded into a new String.
     */
    public String currentName() {
        if (name == null) {
            name = resolveName();
        }
        return name;
    }

    /** The current string value, decoded. */
    public String text() throws JsonScanException {
        readString();
        return decode(start + 1, tokenEnd - 1, stringFlags);
    }

    /**
     * The current string value, decoded, through the names cache (see {@link #currentName}): for a value a body
     * repeats from one request to the next, such as a model's name, which then costs no String.
     */
    public String cachedText() throws JsonScanException {
        readString();
        return cached(start + 1, tokenEnd - 1, stringFlags);
    }

    /** Length of the current string value in UTF-16 chars (a character past U+FFFF counts two), without decoding it. */
    public int textLength() throws JsonScanException {
        readString();
        int from = start + 1;
        int to = tokenEnd - 1;
        if (stringFlags == 0) {
            return to - from;
        }
        int n = 0;
        for (int p = from; p < to; n++) {
            int c = a[p] & 0xFF;
            if (c == '\\') {
                p += a[p + 1] == 'u' ? 6 : 2;
            } else if (c < 0x80) {
                p++;
            } else if (c < 0xE0) {
                p += 2;
            } else if (c < 0xF0) {
                p += 3;
            } else {
                p += 4;
                n++; // a surrogate pair
            }
        }
        return n;
    }

    /** Whether the current string value decodes to {@code s}; allocates nothing for a short {@code s}. */
    public boolean textEquals(String s) throws JsonScanException {
        if (textLength() != s.length()) {
            return false;
        }
        int from = start + 1;
        if (stringFlags == 0) {
            for (int k = 0; k < s.length(); k++) {
                if (a[from + k] != s.charAt(k)) {
                    return false;
                }
            }
            return true;
        }
        char[] c = charsFor(s.length());
        decodeInto(from, tokenEnd - 1, c);
        for (int k = 0; k < s.length(); k++) {
            if (c[k] != s.charAt(k)) {
                return false;
            }
        }
        return true;
    }

    /** The current integer's value; one outside the range of a long is refused. */
    public long longValue() throws JsonScanException {
        if (token != JsonToken.VALUE_NUMBER_INT) {
            throw new IllegalStateException("not an integer: " + token);
        }
        int p = start;
        boolean negative = a[p] == '-';
        if (negative) {
            p++;
        }
        if (tokenEnd - p <= 18) {
            long v = 0;
            for (; p < tokenEnd; p++) {
                v = v * 10 + (a[p] - '0');
            }
            return negative ? -v : v;
        }
        // Accumulated as a negative number, whose range reaches one further than the positive one.
        long v = 0;
        for (; p < tokenEnd; p++) {
            int d = a[p] - '0';
            if (v < (Long.MIN_VALUE + d) / 10) {
                throw syntax("integer out of the range of a 64-bit signed integer", start);
            }
            v = v * 10 - d;
        }
        if (!negative) {
            if (v == Long.MIN_VALUE) {
                throw syntax("integer out of the range of a 64-bit signed integer", start);
            }
            v = -v;
        }
        return v;
    }

    /**
     * The current number's value as the nearest double. A number of at most 15 significant digits and a small power
     * of ten is computed exactly (both operands are exact doubles and one correctly rounded operation gives the same
     * double as a full parse); any other is parsed from its text.
     */
    public double doubleValue() throws JsonScanException {
        if (token != JsonToken.VALUE_NUMBER_INT && token != JsonToken.VALUE_NUMBER_FLOAT) {
            throw new IllegalStateException("not a number: " + token);
        }
        if (token == JsonToken.VALUE_NUMBER_INT && tokenEnd - start <= 16) {
            return longValue();
        }
        int p = start;
        boolean negative = a[p] == '-';
        if (negative) {
            p++;
        }
        long m = 0;
        int digits = 0;
        int scale = 0;
        boolean fraction = false;
        for (; p < tokenEnd; p++) {
            int c = a[p];
            if (c == '.') {
                fraction = true;
            } else if (c >= '0' && c <= '9') {
                m = m * 10 + (c - '0');
                digits++;
                if (fraction) {
                    scale--;
                }
            } else {
                break; // the exponent
            }
        }
        if (p < tokenEnd) {
            p++;
            boolean negativeExponent = a[p] == '-';
            if (a[p] == '-' || a[p] == '+') {
                p++;
            }
            int e = 0;
            for (; p < tokenEnd && e < 1000; p++) {
                e = e * 10 + (a[p] - '0');
            }
            if (p < tokenEnd) {
                digits = Integer.MAX_VALUE; // an exponent of many digits: leave it to the parse
            }
            scale += negativeExponent ? -e : e;
        }
        if (digits <= 15 && scale >= -22 && scale <= 22) {
            double d = scale < 0 ? m / POWERS[-scale] : m * POWERS[scale];
            return negative ? -d : d;
        }
        return Double.parseDouble(new String(a, start, tokenEnd - start, StandardCharsets.ISO_8859_1));
    }

    private static final double[] POWERS = new double[23];

    static {
        double p = 1;
        for (int k = 0; k < POWERS.length; k++) {
            POWERS[k] = p;
            p *= 10;
        }
    }

    // ---------------------------------------------------------------- tokens

    /** The value scanned last ({@link #pending}, from {@link #scanValue}) becomes the current token. */
    private JsonToken takePending() throws JsonScanException {
        JsonToken t = pending;
        start = pendingStart;
        tokenEnd = pendingEnd;
        if (t == JsonToken.VALUE_STRING) {
            stringOpen = true;
        } else if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
            push(t == JsonToken.START_OBJECT, start);
        }
        return token = t;
    }

    /** An array element or the root value, whose first byte {@code c} is at {@code p}. */
    private JsonToken value(int c, int p) throws JsonScanException {
        pending = scanValue(c, p);
        return takePending();
    }

    /** A member: its name at {@code p}, the colon, and the first token of its value, kept for the next call. */
    private JsonToken member(int c, int p) throws JsonScanException {
        if (c != '"') {
            throw syntax("expected a member name in double quotes", p);
        }
        int q = scanString(p + 1, true);
        nameFlags = stringFlags;
        nameStart = p;
        nameEnd = q;
        name = null;
        start = p;
        tokenEnd = q;
        q = skipBlanks(q);
        if (q >= end || a[q] != ':') {
            throw syntax("expected ':' after a member name", q);
        }
        q = skipBlanks(q + 1);
        if (q >= end) {
            throw syntax("unexpected end of input, expected a value", q);
        }
        pending = scanValue(a[q] & 0xFF, q);
        return token = JsonToken.FIELD_NAME;
    }

    /**
     * Scans the first token of a value (all of it but a string's content) into {@link #pendingStart} and
     * {@link #pendingEnd}; containers are entered by the caller.
     */
    private JsonToken scanValue(int c, int p) throws JsonScanException {
        pendingStart = p;
        switch (c) {
            case '"' -> {
                pendingEnd = -1;
                pos = p + 1;
                return JsonToken.VALUE_STRING;
            }
            case '{' -> {
                pendingEnd = pos = p + 1;
                return JsonToken.START_OBJECT;
            }
            case '[' -> {
                pendingEnd = pos = p + 1;
                return JsonToken.START_ARRAY;
            }
            case 't' -> {
                pendingEnd = pos = word(p, TRUE);
                return JsonToken.VALUE_TRUE;
            }
            case 'f' -> {
                pendingEnd = pos = word(p, FALSE);
                return JsonToken.VALUE_FALSE;
            }
            case 'n' -> {
                pendingEnd = pos = word(p, NULL);
                return JsonToken.VALUE_NULL;
            }
            default -> {
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number(p);
                }
                throw syntax("expected a value", p);
            }
        }
    }

    private void push(boolean object, int p) throws JsonScanException {
        if (depth == maxDepth) {
            throw new JsonScanException("nesting deeper than " + maxDepth, p - base, true);
        }
        objects[++depth] = object;
        empty = true;
    }

    /**
     * A literal at {@code p}. A letter or digit right after it (as in {@code truex}) makes it an unknown word,
     * refused here; any other byte is left for the next token to refuse, where Jackson refuses it too.
     */
    private int word(int p, byte[] w) throws JsonScanException {
        for (int k = 1; k < w.length; k++) {
            if (p + k >= end || a[p + k] != w[k]) {
                throw syntax("expected 'true', 'false' or 'null'", p);
            }
        }
        int q = p + w.length;
        if (q < end) {
            int c = a[q] & 0xFF;
            if (c >= '0' && c != ']' && c != '}' && continuesWord(q, c)) {
                throw syntax("expected 'true', 'false' or 'null'", p);
            }
        }
        return q;
    }

    private boolean continuesWord(int q, int c) {
        if (c < 0x80) {
            return Character.isJavaIdentifierPart(c);
        }
        int after = utf8End(q, c);
        return after < 0 || Character.isJavaIdentifierPart(codePoint(q, c));
    }

    /**
     * A number at {@code p}: {@code -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?}. The byte after it is not
     * looked at (the next token checks it) but at the root, where a number must be followed by a blank or the end.
     */
    private JsonToken number(int p) throws JsonScanException {
        int q = p;
        if (a[q] == '-') {
            q++;
            if (q >= end) {
                throw syntax("expected a digit after '-'", q);
            }
        }
        int first = q;
        int c = a[q];
        if (c == '0') {
            q++;
            if (q < end && isDigit(a[q])) {
                throw syntax("leading zero in a number", first);
            }
        } else if (c >= '1' && c <= '9') {
            q = digits(q + 1);
        } else {
            throw syntax("expected a digit", q);
        }
        int count = q - first;
        JsonToken t = JsonToken.VALUE_NUMBER_INT;
        if (q < end && a[q] == '.') {
            int f = digits(q + 1);
            if (f == q + 1) {
                throw syntax("expected a digit after the decimal point", f);
            }
            count += f - q - 1;
            q = f;
            t = JsonToken.VALUE_NUMBER_FLOAT;
        }
        if (q < end && (a[q] == 'e' || a[q] == 'E')) {
            q++;
            if (q < end && (a[q] == '+' || a[q] == '-')) {
                q++;
            }
            int e = digits(q);
            if (e == q) {
                throw syntax("expected a digit in the exponent", e);
            }
            count += e - q;
            q = e;
            t = JsonToken.VALUE_NUMBER_FLOAT;
        }
        if (count > maxNumberDigits) {
            throw new JsonScanException("number of more than " + maxNumberDigits + " digits", p - base, true);
        }
        if (depth == 0 && q < end && !isBlank(a[q])) {
            throw syntax("expected a blank after the number", q);
        }
        pendingEnd = pos = q;
        return t;
    }

    private int digits(int q) {
        while (q < end && isDigit(a[q])) {
            q++;
        }
        return q;
    }

    private static boolean isDigit(byte b) {
        return b >= '0' && b <= '9';
    }

    private static boolean isBlank(byte b) {
        return b == ' ' || b == '\n' || b == '\r' || b == '\t';
    }

    private int skipBlanks(int p) {
        byte[] a = this.a;
        while (p < end) {
            byte b = a[p];
            if (b != ' ' && b != '\n' && b != '\r' && b != '\t') {
                break;
            }
            p++;
        }
        return p;
    }

    private static String separatorExpected(boolean inObject) {
        return inObject ? "expected ',' or '}'" : "expected ',' or ']'";
    }

    // ---------------------------------------------------------------- strings

    private void readString() throws JsonScanException {
        if (token != JsonToken.VALUE_STRING) {
            throw new IllegalStateException("not a string: " + token);
        }
        if (stringOpen) {
            finishString();
        }
    }

    private void finishString() throws JsonScanException {
        tokenEnd = pos = scanString(pos, false);
        stringOpen = false;
    }

    /**
     * Checks a string's content from {@code p} (just past its opening quote) and returns the offset just past its
     * closing quote; sets {@link #stringFlags}. Runs of plain ASCII are passed over eight bytes at a time.
     */
    private int scanString(int p, boolean name) throws JsonScanException {
        byte[] a = this.a;
        int end = this.end;
        int flags = 0;
        for (;;) {
            while (p + 8 <= end) {
                long x = (long) LONGS.get(a, p);
                long quote = x ^ 0x2222222222222222L;
                long backslash = x ^ 0x5C5C5C5C5C5C5C5CL;
                // A high bit set where a byte is below 0x20, is a quote or a backslash (a zero after the xor), or
                // is 0x80 or above. Borrows can only mark bytes after a true one, so the lowest mark is exact.
                long marks = (((x - 0x2020202020202020L) & ~x) | ((quote - ONES) & ~quote)
                        | ((backslash - ONES) & ~backslash) | x) & HIGHS;
                if (marks == 0) {
                    p += 8;
                } else {
                    p += Long.numberOfTrailingZeros(marks) >>> 3;
                    break;
                }
            }
            if (p >= end) {
                throw syntax("unterminated string", p);
            }
            int c = a[p] & 0xFF;
            switch (STRING_BYTES[c]) {
                case PLAIN -> p++;
                case QUOTE -> {
                    stringFlags = flags;
                    return p + 1;
                }
                case BACKSLASH -> {
                    p = escape(p, name);
                    flags |= ESCAPED;
                }
                case CONTROL -> throw syntax("control character in a string", p);
                default -> {
                    int after = utf8End(p, c);
                    if (after < 0) {
                        throw syntax("invalid UTF-8", p);
                    }
                    p = after;
                    flags |= NON_ASCII;
                }
            }
        }
    }

    /**
     * Checks the escape whose backslash is at {@code p}; returns the offset past it. A string value may name a lone
     * surrogate (<code>&#92;ud83d</code> alone); a member name may not: there a high surrogate must be followed at once
     * by an escaped low one, as Jackson requires (it keeps names as UTF-8 bytes, which cannot hold a lone surrogate).
     */
    private int escape(int p, boolean name) throws JsonScanException {
        if (p + 1 >= end) {
            throw syntax("unterminated string", end);
        }
        switch (a[p + 1]) {
            case '"', '\\', '/', 'b', 'f', 'n', 'r', 't' -> {
                return p + 2;
            }
            case 'u' -> {
                int u = hex4(p + 2);
                if (name && Character.isSurrogate((char) u)) {
                    if (Character.isLowSurrogate((char) u) || p + 7 >= end || a[p + 6] != '\\' || a[p + 7] != 'u'
                            || !Character.isLowSurrogate((char) hex4(p + 8))) {
                        throw syntax("lone surrogate escape in a member name", p);
                    }
                    return p + 12;
                }
                return p + 6;
            }
            default -> throw syntax("invalid escape", p);
        }
    }

    /** The value of the four hex digits at {@code p}. */
    private int hex4(int p) throws JsonScanException {
        int u = 0;
        for (int k = p; k < p + 4; k++) {
            int h = k < end ? HEX[a[k] & 0xFF] : -1;
            if (h < 0) {
                throw syntax("expected four hex digits after \\u", k);
            }
            u = u << 4 | h;
        }
        return u;
    }

    /**
     * The offset past the well-formed UTF-8 character whose lead byte {@code c} (0x80 or above) is at {@code p}, or
     * -1: RFC 3629's table, so no overlong form, no surrogate, nothing past U+10FFFF, no truncated sequence.
     */
    private int utf8End(int p, int c) {
        byte[] a = this.a;
        if (c < 0xC2) {
            return -1; // a continuation byte, or the lead of an overlong two-byte form
        }
        if (c < 0xE0) {
            return p + 1 < end && isContinuation(a[p + 1]) ? p + 2 : -1;
        }
        if (c < 0xF0) {
            if (p + 2 >= end) {
                return -1;
            }
            int b = a[p + 1] & 0xFF;
            int lo = c == 0xE0 ? 0xA0 : 0x80; // overlong below
            int hi = c == 0xED ? 0x9F : 0xBF; // surrogates above
            return b >= lo && b <= hi && isContinuation(a[p + 2]) ? p + 3 : -1;
        }
        if (c < 0xF5) {
            if (p + 3 >= end) {
                return -1;
            }
            int b = a[p + 1] & 0xFF;
            int lo = c == 0xF0 ? 0x90 : 0x80; // overlong below
            int hi = c == 0xF4 ? 0x8F : 0xBF; // past U+10FFFF above
            return b >= lo && b <= hi && isContinuation(a[p + 2]) && isContinuation(a[p + 3]) ? p + 4 : -1;
        }
        return -1;
    }

    private static boolean isContinuation(byte b) {
        return (b & 0xC0) == 0x80;
    }

    /** The code point of the well-formed character whose lead byte {@code c} is at {@code p}. */
    private int codePoint(int p, int c) {
        if (c < 0xE0) {
            return (c & 0x1F) << 6 | (a[p + 1] & 0x3F);
        }
        if (c < 0xF0) {
            return (c & 0x0F) << 12 | (a[p + 1] & 0x3F) << 6 | (a[p + 2] & 0x3F);
        }
        return (c & 0x07) << 18 | (a[p + 1] & 0x3F) << 12 | (a[p + 2] & 0x3F) << 6 | (a[p + 3] & 0x3F);
    }

    /** The checked string content from {@code from} to {@code to} (quotes excluded) as a String. */
    private String decode(int from, int to, int flags) {
        if (flags == 0) {
            return new String(a, from, to - from, StandardCharsets.ISO_8859_1);
        }
        if (flags == NON_ASCII) {
            return new String(a, from, to - from, StandardCharsets.UTF_8);
        }
        char[] c = charsFor(to - from); // never more chars than bytes
        return new String(c, 0, decodeInto(from, to, c));
    }

    /** Decodes checked string content into {@code dst}; returns the number of chars written. */
    private int decodeInto(int from, int to, char[] dst) {
        int n = 0;
        for (int p = from; p < to; ) {
            int c = a[p] & 0xFF;
            if (c == '\\') {
                int e = a[p + 1];
                p += 2;
                dst[n++] = switch (e) {
                    case 'b' -> '\b';
                    case 'f' -> '\f';
                    case 'n' -> '\n';
                    case 'r' -> '\r';
                    case 't' -> '\t';
                    case 'u' -> {
                        char u = (char) (HEX[a[p] & 0xFF] << 12 | HEX[a[p + 1] & 0xFF] << 8
                                | HEX[a[p + 2] & 0xFF] << 4 | HEX[a[p + 3] & 0xFF]);
                        p += 4;
                        yield u;
                    }
                    default -> (char) e; // the quote, the backslash or the slash itself
                };
            } else if (c < 0x80) {
                dst[n++] = (char) c;
                p++;
            } else {
                int cp = codePoint(p, c);
                if (cp >= 0x10000) {
                    dst[n++] = Character.highSurrogate(cp);
                    dst[n++] = Character.lowSurrogate(cp);
                    p += 4;
                } else {
                    dst[n++] = (char) cp;
                    p += c < 0xE0 ? 2 : 3;
                }
            }
        }
        return n;
    }

    private char[] charsFor(int length) {
        if (chars.length >= length) {
            return chars;
        }
        if (length > MAX_KEPT_CHARS) {
            return new char[length];
        }
        chars = new char[Math.max(length, Math.min(MAX_KEPT_CHARS, 2 * chars.length))];
        return chars;
    }

    private String resolveName() {
        return cached(nameStart + 1, nameEnd - 1, nameFlags);
    }

    /** The string whose content is {@code a[from, to)}: from the names cache when short and unescaped, else decoded. */
    private String cached(int from, int to, int flags) {
        int length = to - from;
        if ((flags & ESCAPED) != 0 || length > NAME_MAX) {
            return decode(from, to, flags);
        }
        int h = 0;
        for (int p = from; p < to; p++) {
            h = 31 * h + a[p];
        }
        int home = (h * 0x9E3779B9) >>> (32 - NAME_BITS);
        for (int k = 0; k < NAME_PROBES; k++) {
            int slot = (home + k) & (NAME_SLOTS - 1);
            String cached = names[slot];
            if (cached == null) {
                return cache(slot, from, to, flags);
            }
            int at = slot * NAME_MAX;
            if (nameLengths[slot] == length && Arrays.equals(a, from, to, nameBytes, at, at + length)) {
                return cached;
            }
        }
        return cache(home, from, to, flags);
    }

    private String cache(int slot, int from, int to, int flags) {
        String s = decode(from, to, flags);
        System.arraycopy(a, from, nameBytes, slot * NAME_MAX, to - from);
        nameLengths[slot] = (byte) (to - from);
        names[slot] = s;
        return s;
    }

    private JsonScanException syntax(String what, int p) {
        return new JsonScanException(what, p - base, false);
    }
}
