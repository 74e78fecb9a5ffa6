package io.modelgateway.core.exchange;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.DateFormatter;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValidationUtil;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpHeadersFactory;
import io.netty.util.AsciiString;
import io.netty.util.CharsetUtil;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Calendar;
import java.util.Collections;
import java.util.Date;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * The headers of one HTTP message as a flat array of names and values in arrival order, searched front to back with
 * a case-insensitive compare — in place of Netty's {@code DefaultHttpHeaders}, a hash table of linked entries made
 * for large header sets. A gateway's heads are small (a client's request, the request it sends upstream, the
 * upstream's answer, the answer it writes: each around ten headers), and every request makes four of them plus two
 * trailer sets that are almost always empty; here each is one object and one array (none until the first header),
 * an add is an append with no hashing, and a lookup compares lengths before it compares bytes.
 *
 * <p>Validation follows Netty's default header factories: a {@link #VALIDATING} instance (the decoders of the
 * client's request and of an upstream's answer) refuses a name that is not an HTTP token and a value with a
 * character a header may not hold, with Netty's {@link IllegalArgumentException}, which the decoder turns into a
 * refused message; a {@link #VALIDATING_TRAILERS} instance also refuses the framing headers in a trailer. A
 * {@link #TRUSTED} instance (heads the gateway builds from values it checked when the config was loaded) checks
 * nothing.
 *
 * <p>A peer decides how many headers a message has, within the decoders' header-size limit (16 KiB for a client,
 * the upstream decoder's for an answer): a lookup is linear in that number, so a hostile head of a thousand tiny
 * headers costs a few microseconds per lookup, never more. Not thread-safe, like every message it belongs to.
 */
public final class ArrayHttpHeaders extends HttpHeaders {
    private enum Check { NONE, HEADERS, TRAILERS }

    /** Heads the gateway builds itself: nothing checked. */
    public static final HttpHeadersFactory TRUSTED = factory(Check.NONE);
    /** Heads a peer sent: names must be tokens, values free of CR, LF and NUL (as Netty's default factory). */
    public static final HttpHeadersFactory VALIDATING = factory(Check.HEADERS);
    /** Trailers a peer sent: as {@link #VALIDATING}, and no Content-Length, Transfer-Encoding or Trailer. */
    public static final HttpHeadersFactory VALIDATING_TRAILERS = factory(Check.TRAILERS);

    private static final CharSequence[] NONE = new CharSequence[0];
    /** Room for twelve headers at first: the answers the gateway writes carry about that many. */
    private static final int FIRST_CAPACITY = 24;

    private final Check check;
    /** Name of entry i at 2i, its value at 2i + 1. */
    private CharSequence[] kv = NONE;
    private int size;

    private ArrayHttpHeaders(Check check) {
        this.check = check;
    }

    private ArrayHttpHeaders(Check check, int room) {
        this.check = check;
        this.kv = room <= 0 ? NONE : new CharSequence[2 * room];
    }

    /**
     * A {@link #VALIDATING} head with room for {@code room} headers before its array grows: for a decoder that knows
     * about how many the head it is reading holds, so that the head costs one array of the right size instead of
     * the first capacity's (twelve) and, past that, a second one twice as large.
     */
    public static ArrayHttpHeaders validating(int room) {
        return new ArrayHttpHeaders(Check.HEADERS, room);
    }

    /** A {@link #TRUSTED} head with room for {@code room} headers before its array grows (see {@link #validating}). */
    public static ArrayHttpHeaders trusted(int room) {
        return new ArrayHttpHeaders(Check.NONE, room);
    }

    private static HttpHeadersFactory factory(Check check) {
        return new HttpHeadersFactory() {
            @Override
            public HttpHeaders newHeaders() {
                return new ArrayHttpHeaders(check);
            }

            @Override
            public HttpHeaders newEmptyHeaders() {
                return new ArrayHttpHeaders(check);
            }
        };
    }

    // ------------------------------------------------------------------ search

    private int indexOf(CharSequence name, int from) {
        int length = name.length();
        CharSequence[] a = kv;
        for (int i = from; i < size; i++) {
            CharSequence n = a[2 * i];
            if (n.length() == length && AsciiString.contentEqualsIgnoreCase(n, name)) {
                return i;
            }
        }
        return -1;
    }

    private CharSequence first(CharSequence name) {
        int i = indexOf(name, 0);
        return i < 0 ? null : kv[2 * i + 1];
    }

    /**
     * The first value of {@code name} in {@code headers} as it is held, or null: for an {@code ArrayHttpHeaders} no
     * {@code String} is made of it (a decoder's value is a view into the head it read), for other headers
     * {@link HttpHeaders#get(CharSequence)}.
     */
    public static CharSequence firstValue(HttpHeaders headers, CharSequence name) {
        return headers instanceof ArrayHttpHeaders a ? a.first(name) : headers.get(name);
    }

    /**
     * Where the next value of {@code name} in {@code headers} is, at or after the place {@code from} (0 to start, then
     * the last place plus one), or -1 when there is none: for walking a name's values in arrival order without an
     * iterator, {@code for (int i = nextValue(h, n, 0); i >= 0; i = nextValue(h, n, i + 1))}, each read with
     * {@link #valueAt}. For an {@code ArrayHttpHeaders} a place is an entry, and the walk is one pass that makes
     * nothing; for other headers it is an index into their {@code getAll(name)}, made at each call.
     */
    public static int nextValue(HttpHeaders headers, CharSequence name, int from) {
        if (headers instanceof ArrayHttpHeaders a) {
            return a.indexOf(name, from);
        }
        return from < headers.getAll(name).size() ? from : -1;
    }

    /** The value of {@code name} at a place {@link #nextValue} returned, as it is held. */
    public static CharSequence valueAt(HttpHeaders headers, CharSequence name, int place) {
        return headers instanceof ArrayHttpHeaders a ? a.kv[2 * place + 1] : headers.getAll(name).get(place);
    }

    @Override
    public String get(String name) {
        return get((CharSequence) name);
    }

    @Override
    public String get(CharSequence name) {
        CharSequence v = first(name);
        return v == null ? null : v.toString();
    }

    @Override
    public Integer getInt(CharSequence name) {
        CharSequence v = first(name);
        if (v == null) {
            return null;
        }
        try {
            return Integer.parseInt(v.toString().trim());
        } catch (NumberFormatException e) {
            return null;
        }
    }

    @Override
    public int getInt(CharSequence name, int defaultValue) {
        Integer v = getInt(name);
        return v == null ? defaultValue : v;
    }

    @Override
    public Short getShort(CharSequence name) {
        Integer v = getInt(name);
        return v == null || v != v.shortValue() ? null : v.shortValue();
    }

    @Override
    public short getShort(CharSequence name, short defaultValue) {
        Short v = getShort(name);
        return v == null ? defaultValue : v;
    }

    @Override
    public Long getTimeMillis(CharSequence name) {
        CharSequence v = first(name);
        if (v == null) {
            return null;
        }
        Date d = DateFormatter.parseHttpDate(v);
        return d == null ? null : d.getTime();
    }

    @Override
    public long getTimeMillis(CharSequence name, long defaultValue) {
        Long v = getTimeMillis(name);
        return v == null ? defaultValue : v;
    }

    @Override
    public List<String> getAll(String name) {
        return getAll((CharSequence) name);
    }

    @Override
    public List<String> getAll(CharSequence name) {
        int i = indexOf(name, 0);
        if (i < 0) {
            return Collections.emptyList();
        }
        int second = indexOf(name, i + 1);
        if (second < 0) {
            return Collections.singletonList(kv[2 * i + 1].toString()); // nearly always: one header of a name
        }
        List<String> out = new ArrayList<>(4);
        for (; i >= 0; i = indexOf(name, i + 1)) {
            out.add(kv[2 * i + 1].toString());
        }
        return out;
    }

    @Override
    public Iterator<String> valueStringIterator(CharSequence name) {
        return getAll(name).iterator();
    }

    /** The values of {@code name}, found as the iteration goes (the decoders ask this of every framing header). */
    @Override
    public Iterator<CharSequence> valueCharSequenceIterator(CharSequence name) {
        return new Iterator<>() {
            private int next = indexOf(name, 0);

            @Override
            public boolean hasNext() {
                return next >= 0;
            }

            @Override
            public CharSequence next() {
                if (next < 0) {
                    throw new NoSuchElementException();
                }
                CharSequence v = kv[2 * next + 1];
                next = indexOf(name, next + 1);
                return v;
            }
        };
    }

    @Override
    public List<Map.Entry<String, String>> entries() {
        List<Map.Entry<String, String>> out = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            out.add(new AbstractMap.SimpleImmutableEntry<>(kv[2 * i].toString(), kv[2 * i + 1].toString()));
        }
        return out;
    }

    @Override
    public boolean contains(String name) {
        return indexOf(name, 0) >= 0;
    }

    @Override
    public boolean contains(CharSequence name) {
        return indexOf(name, 0) >= 0;
    }

    @Override
    public boolean contains(String name, String value, boolean ignoreCase) {
        return contains((CharSequence) name, value, ignoreCase);
    }

    /** Whether a {@code name} header's whole value is {@code value} (Netty's rule: not a comma-separated part). */
    @Override
    public boolean contains(CharSequence name, CharSequence value, boolean ignoreCase) {
        for (int i = indexOf(name, 0); i >= 0; i = indexOf(name, i + 1)) {
            CharSequence v = kv[2 * i + 1];
            if (ignoreCase ? AsciiString.contentEqualsIgnoreCase(v, value) : AsciiString.contentEquals(v, value)) {
                return true;
            }
        }
        return false;
    }

    /** Whether {@code value} is the value, or one of the comma-separated values, of a {@code name} header. */
    @Override
    public boolean containsValue(CharSequence name, CharSequence value, boolean ignoreCase) {
        for (int i = indexOf(name, 0); i >= 0; i = indexOf(name, i + 1)) {
            if (listContains(kv[2 * i + 1], value, ignoreCase)) {
                return true;
            }
        }
        return false;
    }

    private static boolean listContains(CharSequence list, CharSequence value, boolean ignoreCase) {
        int start = 0;
        int n = list.length();
        while (start <= n) {
            int comma = start;
            while (comma < n && list.charAt(comma) != ',') {
                comma++;
            }
            int s = start;
            int e = comma;
            while (s < e && isOws(list.charAt(s))) {
                s++;
            }
            while (e > s && isOws(list.charAt(e - 1))) {
                e--;
            }
            if (e - s == value.length() && (ignoreCase
                    ? AsciiString.regionMatches(list, true, s, value, 0, e - s)
                    : AsciiString.regionMatches(list, false, s, value, 0, e - s))) {
                return true;
            }
            start = comma + 1;
        }
        return false;
    }

    private static boolean isOws(char c) {
        return c == ' ' || c == '\t';
    }

    @Override
    public Iterator<Map.Entry<String, String>> iterator() {
        return entries().iterator();
    }

    /**
     * The entries in order. The entry {@code next()} returns is the iterator itself, pointing at the current header:
     * read it before the next call (every reader in Netty's codecs and the gateway does); {@link #entries()} gives
     * entries to keep.
     */
    @Override
    public Iterator<Map.Entry<CharSequence, CharSequence>> iteratorCharSequence() {
        return new Cursor();
    }

    private final class Cursor implements Iterator<Map.Entry<CharSequence, CharSequence>>,
            Map.Entry<CharSequence, CharSequence> {
        private int next;
        private int current = -1;

        @Override
        public boolean hasNext() {
            return next < size;
        }

        @Override
        public Map.Entry<CharSequence, CharSequence> next() {
            if (next >= size) {
                throw new NoSuchElementException();
            }
            current = next++;
            return this;
        }

        @Override
        public CharSequence getKey() {
            return kv[2 * current];
        }

        @Override
        public CharSequence getValue() {
            return kv[2 * current + 1];
        }

        @Override
        public CharSequence setValue(CharSequence value) {
            throw new UnsupportedOperationException("read-only view");
        }

        @Override
        public String toString() {
            return getKey() + "=" + getValue();
        }
    }

    @Override
    public boolean isEmpty() {
        return size == 0;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public Set<String> names() {
        Set<String> out = new LinkedHashSet<>();
        for (int i = 0; i < size; i++) {
            out.add(kv[2 * i].toString());
        }
        return out;
    }

    // ------------------------------------------------------------------ change

    @Override
    public HttpHeaders add(String name, Object value) {
        return add((CharSequence) name, value);
    }

    @Override
    public HttpHeaders add(CharSequence name, Object value) {
        append(checkedName(name), checkedValue(value));
        return this;
    }

    @Override
    public HttpHeaders add(String name, Iterable<?> values) {
        return add((CharSequence) name, values);
    }

    @Override
    public HttpHeaders add(CharSequence name, Iterable<?> values) {
        CharSequence n = checkedName(name);
        for (Object v : values) {
            append(n, checkedValue(v));
        }
        return this;
    }

    @Override
    public HttpHeaders add(HttpHeaders headers) {
        if (headers == this) {
            throw new IllegalArgumentException("can't add to itself.");
        }
        Iterator<Map.Entry<CharSequence, CharSequence>> it = headers.iteratorCharSequence();
        while (it.hasNext()) {
            Map.Entry<CharSequence, CharSequence> e = it.next();
            add(e.getKey(), e.getValue());
        }
        return this;
    }

    @Override
    public HttpHeaders addInt(CharSequence name, int value) {
        return add(name, Integer.toString(value));
    }

    @Override
    public HttpHeaders addShort(CharSequence name, short value) {
        return add(name, Short.toString(value));
    }

    @Override
    public HttpHeaders set(String name, Object value) {
        return set((CharSequence) name, value);
    }

    /** Replaces every {@code name} header by one, at the end (as Netty's headers do). */
    @Override
    public HttpHeaders set(CharSequence name, Object value) {
        CharSequence n = checkedName(name);
        CharSequence v = checkedValue(value);
        int first = indexOf(n, 0);
        if (first >= 0) {
            removeFrom(n, first); // usually there is none: a read-only scan, no shifting
        }
        append(n, v);
        return this;
    }

    @Override
    public HttpHeaders set(String name, Iterable<?> values) {
        return set((CharSequence) name, values);
    }

    @Override
    public HttpHeaders set(CharSequence name, Iterable<?> values) {
        CharSequence n = checkedName(name);
        removeFrom(n, 0);
        for (Object v : values) {
            append(n, checkedValue(v));
        }
        return this;
    }

    @Override
    public HttpHeaders set(HttpHeaders headers) {
        if (headers != this) {
            clear();
            add(headers);
        }
        return this;
    }

    @Override
    public HttpHeaders setAll(HttpHeaders headers) {
        if (headers != this) {
            for (String name : headers.names()) {
                removeFrom(name, 0);
            }
            add(headers);
        }
        return this;
    }

    @Override
    public HttpHeaders setInt(CharSequence name, int value) {
        return set(name, Integer.toString(value));
    }

    @Override
    public HttpHeaders setShort(CharSequence name, short value) {
        return set(name, Short.toString(value));
    }

    @Override
    public HttpHeaders remove(String name) {
        return remove((CharSequence) name);
    }

    @Override
    public HttpHeaders remove(CharSequence name) {
        removeFrom(name, 0);
        return this;
    }

    @Override
    public HttpHeaders clear() {
        Arrays.fill(kv, 0, 2 * size, null);
        size = 0;
        return this;
    }

    @Override
    public HttpHeaders copy() {
        ArrayHttpHeaders c = new ArrayHttpHeaders(check);
        c.kv = size == 0 ? NONE : Arrays.copyOf(kv, 2 * size);
        c.size = size;
        return c;
    }

    private void append(CharSequence name, CharSequence value) {
        if (2 * size == kv.length) {
            kv = Arrays.copyOf(kv, kv.length == 0 ? FIRST_CAPACITY : 2 * kv.length);
        }
        kv[2 * size] = name;
        kv[2 * size + 1] = value;
        size++;
    }

    /** Removes every {@code name} header at index {@code from} or later, keeping the order of the rest. */
    private void removeFrom(CharSequence name, int from) {
        int to = from;
        for (int i = from; i < size; i++) {
            CharSequence n = kv[2 * i];
            if (n.length() == name.length() && AsciiString.contentEqualsIgnoreCase(n, name)) {
                continue;
            }
            kv[2 * to] = n;
            kv[2 * to + 1] = kv[2 * i + 1];
            to++;
        }
        Arrays.fill(kv, 2 * to, 2 * size, null);
        size = to;
    }

    // ------------------------------------------------------------------ wire

    /** How many bytes {@link #encode} writes: each header as {@code name: value} and CRLF. */
    public int encodedLength() {
        int n = 0;
        for (int i = 0; i < 2 * size; i += 2) {
            n += kv[i].length() + kv[i + 1].length() + 4;
        }
        return n;
    }

    /**
     * Writes each header as {@code name: value} and CRLF, in order, the way Netty's HTTP encoders write a head: an
     * {@link AsciiString}'s bytes as they are, any other text a byte per character (ISO-8859-1; a character past it
     * as {@code ?}).
     */
    public void encode(ByteBuf out) {
        for (int i = 0; i < 2 * size; i += 2) {
            ascii(out, kv[i]);
            out.writeShort(':' << 8 | ' ');
            ascii(out, kv[i + 1]);
            out.writeShort('\r' << 8 | '\n');
        }
    }

    private static void ascii(ByteBuf out, CharSequence s) {
        if (s instanceof AsciiString a) {
            out.writeBytes(a.array(), a.arrayOffset(), a.length());
        } else {
            out.writeCharSequence(s, CharsetUtil.US_ASCII);
        }
    }

    // ------------------------------------------------------------------ validation (peers' heads only)

    private CharSequence checkedName(CharSequence name) {
        if (name == null) {
            throw new NullPointerException("name");
        }
        if (check == Check.NONE) {
            return name;
        }
        if (name.length() == 0) {
            throw new IllegalArgumentException("empty headers are not allowed [" + name + ']');
        }
        int bad = HttpHeaderValidationUtil.validateToken(name);
        if (bad != -1) {
            throw new IllegalArgumentException("a header name can only contain \"token\" characters, but found invalid "
                    + "character 0x" + Integer.toHexString(name.charAt(bad)) + " at index " + bad + " of header '"
                    + name + "'.");
        }
        if (check == Check.TRAILERS && (HttpHeaderNames.CONTENT_LENGTH.contentEqualsIgnoreCase(name)
                || HttpHeaderNames.TRANSFER_ENCODING.contentEqualsIgnoreCase(name)
                || HttpHeaderNames.TRAILER.contentEqualsIgnoreCase(name))) {
            throw new IllegalArgumentException("prohibited trailing header: " + name);
        }
        return name;
    }

    private CharSequence checkedValue(Object value) {
        if (value == null) {
            throw new NullPointerException("value");
        }
        CharSequence v;
        if (value instanceof CharSequence s) {
            v = s;
        } else if (value instanceof Date d) {
            v = DateFormatter.format(d);
        } else if (value instanceof Calendar c) {
            v = DateFormatter.format(c.getTime());
        } else {
            v = value.toString();
        }
        if (check != Check.NONE) {
            int bad = HttpHeaderValidationUtil.validateValidHeaderValue(v);
            if (bad != -1) {
                throw new IllegalArgumentException("a header value contains prohibited character 0x"
                        + Integer.toHexString(v.charAt(bad)) + " at index " + bad + '.');
            }
        }
        return v;
    }
}
