package io.modelgateway.core.upstream;

import io.modelgateway.core.exchange.ArrayHttpHeaders;
import io.modelgateway.core.exchange.HeadBytes;
import io.modelgateway.core.exchange.SharedNames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.PrematureChannelClosureException;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AsciiString;
import io.netty.util.IllegalReferenceCountException;
import io.netty.util.internal.StringUtil;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Reads an upstream's HTTP/1.1 answers (RFC 9112) into Netty's message objects — a {@link HttpResponse}, then
 * {@code HttpContent}s, then a {@link LastHttpContent} — in place of Netty's client decoder, for two costs that
 * decoder has on the hot path:
 *
 * <ul>
 *   <li><b>Body.</b> Netty's decoder hands on each chunk of a chunked body as its own content (a content object and a
 *   slice of the read per chunk); an SSE upstream sends one event per chunk, so a burst of fifty events in one read
 *   became fifty of each. Here all the body bytes one read holds leave as <em>one</em> content: a slice of the read
 *   when they are one run larger than {@value #COPY_LIMIT} bytes, else a copy into one pooled buffer (whose object
 *   the allocator recycles; a slice object it does not), in one content object per connection that carries read
 *   after read once the exchange released it ({@link Content}).</li>
 *   <li><b>Head.</b> Netty makes a {@code String} (and its array) per header value and an {@code AsciiString} (and
 *   its array) per name. Here the head is copied once into one array; values and unknown names are views into it,
 *   and the common names are shared constants (when the upstream spelled them exactly so).</li>
 * </ul>
 *
 * <p>What it accepts and refuses is what the gateway asked of Netty's decoder (strict line parsing, RFC 9112
 * transfer coding): every line ends with CR LF, and a bare CR or LF anywhere in a head, a chunk-size line or a
 * trailer is refused; a status line over {@value #MAX_STATUS_LINE} bytes, header fields or trailers over
 * {@value #MAX_HEAD} bytes, a chunk-size line over {@value #MAX_STATUS_LINE} bytes; a status code that is not three
 * digits; a field without a colon or with a name that is not a token or a value holding a character no field may
 * hold ({@link ArrayHttpHeaders#VALIDATING}); both Content-Length and Transfer-Encoding, or Transfer-Encoding in
 * an HTTP/1.0 answer; Content-Length values that are not one decimal number; a chunk size that is not hex (blanks
 * before it included: Netty skipped those) or over 2^31 − 1, chunk data not followed by CR LF.
 * A refusal is a message whose decoder result failed (a response when the head was refused, a last content when the
 * body was), and everything after it on the connection is dropped: the exchange closes it.
 *
 * <p>Framing (RFC 9112 section 6.3, for answers): 1xx, 204 and 304 have no body (a 1xx is followed by the real head);
 * a Transfer-Encoding whose last coding is {@code chunked} is chunked, any other runs to the close; then
 * Content-Length; else the body runs to the close. Whitespace between a field name and its colon is dropped, a
 * folded line (obs-fold) joins the value before it with one space, and control bytes or blanks before a status line
 * are skipped (all as Netty's decoder did). Trailer fields other than Content-Length, Transfer-Encoding and Trailer
 * are kept on the last content. A close before a head's fields ended is a refused head; a close in a chunked or
 * counted body ends nothing (the exchange sees the close); a close ends a body that runs to the close.
 *
 * <p>The gateway never asks an upstream with HEAD or CONNECT, so an answer's framing never depends on the request.
 */
public final class UpstreamResponseDecoder extends ByteToMessageDecoder {
    /** The longest status line, and the longest chunk-size line, without their CR LF. */
    public static final int MAX_STATUS_LINE = 4096;
    /** The longest run of header fields (or of trailer fields), their line ends included. */
    public static final int MAX_HEAD = 65536;
    /** Body bytes of one read up to this many are copied into one pooled buffer; a longer single run is sliced. */
    static final int COPY_LIMIT = 8192;
    /** Runs of body bytes gathered in one read before they leave as one content (more: another content). */
    private static final int MAX_PIECES = 64;

    private static final HttpResponseStatus REFUSED = new HttpResponseStatus(999, "Refused");
    private static final AsciiString CHUNKED = AsciiString.cached("chunked");
    /** Names an upstream commonly sends, shared when spelled exactly so (lower case, as HTTP/2 and most APIs do). */
    private static final SharedNames KNOWN = new SharedNames(
            HttpHeaderNames.CONTENT_TYPE, HttpHeaderNames.CONTENT_LENGTH, HttpHeaderNames.TRANSFER_ENCODING,
            HttpHeaderNames.CONNECTION, HttpHeaderNames.DATE, HttpHeaderNames.SERVER, HttpHeaderNames.CACHE_CONTROL,
            HttpHeaderNames.KEEP_ALIVE, HttpHeaderNames.RETRY_AFTER, HttpHeaderNames.VARY, HttpHeaderNames.SET_COOKIE,
            HttpHeaderNames.CONTENT_ENCODING, AsciiString.cached("x-request-id"), AsciiString.cached("request-id"),
            AsciiString.cached("openai-processing-ms"), AsciiString.cached("openai-version"),
            AsciiString.cached("openai-organization"), AsciiString.cached("strict-transport-security"),
            AsciiString.cached("cf-ray"), AsciiString.cached("cf-cache-status"), AsciiString.cached("alt-svc"),
            AsciiString.cached("x-content-type-options"), AsciiString.cached("anthropic-organization-id"),
            AsciiString.cached("x-ratelimit-limit-requests"), AsciiString.cached("x-ratelimit-limit-tokens"),
            AsciiString.cached("x-ratelimit-remaining-requests"), AsciiString.cached("x-ratelimit-remaining-tokens"),
            AsciiString.cached("x-ratelimit-reset-requests"), AsciiString.cached("x-ratelimit-reset-tokens"));
    /**
     * Values providers send in every answer's head, spelled exactly so (a value is data: only these very bytes are
     * the constant); any other value is a view into the head's copy, an object per field.
     */
    private static final SharedNames KNOWN_VALUES = new SharedNames(
            HttpHeaderValues.TEXT_EVENT_STREAM, AsciiString.cached("text/event-stream; charset=utf-8"),
            HttpHeaderValues.APPLICATION_JSON, AsciiString.cached("application/json; charset=utf-8"),
            HttpHeaderValues.CHUNKED, HttpHeaderValues.KEEP_ALIVE, HttpHeaderValues.CLOSE, HttpHeaderValues.NO_CACHE,
            AsciiString.cached("nosniff"), AsciiString.cached("cloudflare"), AsciiString.cached("DYNAMIC"),
            AsciiString.cached("2020-10-01"), AsciiString.cached("max-age=31536000; includeSubDomains; preload"));

    private enum State { HEAD, FIXED, CHUNK_SIZE, CHUNK_DATA, CHUNK_END, TRAILER, TO_CLOSE, REFUSED }

    private State state = State.HEAD;
    /** FIXED: body bytes still to come; CHUNK_DATA: bytes of this chunk still to come. */
    private long remaining;
    /**
     * HEAD and TRAILER: bytes from the reader index already searched for the block's end (always a line start; in
     * HEAD, above zero once the status line's end was seen, so a close then leaves a head unfinished).
     */
    private int scanned;
    /** The lines of the block {@link #blockEnd} has found so far, its empty last line not counted. */
    private int blockLines;
    /** This read's runs of body bytes (index, length pairs in the cumulation), not yet handed on. */
    private final int[] pieces = new int[2 * MAX_PIECES];
    private int pieceCount;
    /** The content object made last: used again for a later read's bytes once it was released. */
    private Content free;

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        try {
            while (step(ctx, in, out)) {
                // each step consumed something or handed something on
            }
        } catch (Refusal r) {
            refuse(ctx, in, out, r);
        }
        handOnPieces(ctx, in, out);
    }

    /** Hands on what {@code in} holds of the {@link #remaining} bytes of a counted body or chunk; false when none. */
    private boolean counted(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        int n = (int) Math.min(remaining, in.readableBytes());
        if (n == 0) {
            return false;
        }
        piece(ctx, in, n, out);
        remaining -= n;
        return true;
    }

    /** One step of the state machine; false when it needs more bytes. */
    private boolean step(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        switch (state) {
            case HEAD:
                return readHead(ctx, in, out);
            case FIXED: {
                if (!counted(ctx, in, out)) {
                    return false;
                }
                if (remaining == 0) {
                    end(ctx, in, out, LastHttpContent.EMPTY_LAST_CONTENT);
                }
                return true;
            }
            case TO_CLOSE: {
                int n = in.readableBytes();
                if (n == 0) {
                    return false;
                }
                piece(ctx, in, n, out);
                return true;
            }
            case CHUNK_SIZE:
                return readChunkSize(in);
            case CHUNK_DATA: {
                if (!counted(ctx, in, out)) {
                    return false;
                }
                if (remaining == 0) {
                    state = State.CHUNK_END;
                }
                return true;
            }
            case CHUNK_END: {
                if (in.readableBytes() < 2) {
                    return false;
                }
                int at = in.readerIndex();
                if (in.getByte(at) != '\r' || in.getByte(at + 1) != '\n') {
                    throw new Refusal(false, "chunk data not followed by CR LF");
                }
                in.skipBytes(2);
                state = State.CHUNK_SIZE;
                return true;
            }
            case TRAILER:
                return readTrailer(ctx, in, out);
            case REFUSED:
            default:
                in.skipBytes(in.readableBytes());
                return false;
        }
    }

    @Override
    protected void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (in.isReadable()) {
            decode(ctx, in, out);
        }
        if (state == State.TO_CLOSE) {
            out.add(LastHttpContent.EMPTY_LAST_CONTENT);
            state = State.HEAD;
        } else if (state == State.HEAD && scanned > 0) {
            scanned = 0;
            state = State.REFUSED;
            out.add(refusedHead(new PrematureChannelClosureException("closed before the answer's head ended")));
        }
    }

    // ---- head ----

    private boolean readHead(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (scanned == 0) {
            skipControlBytes(in);
            if (!in.isReadable()) {
                return false;
            }
        }
        int end = blockEnd(in, true);
        if (end < 0) {
            return false;
        }
        int start = in.readerIndex();
        byte[] h = new byte[end - start];
        in.getBytes(start, h);
        in.readerIndex(end);
        scanned = 0;
        HttpResponse response = parseHead(h, blockLines - 1); // the fields: the lines after the status line
        int code = response.status().code();
        handOnPieces(ctx, in, out);
        if (code < 200 || code == 204 || code == 304) {
            out.add(response);
            out.add(LastHttpContent.EMPTY_LAST_CONTENT);
            if (code == 101) {
                state = State.REFUSED; // another protocol follows: nothing after it is an answer
            }
            return true;
        }
        HttpHeaders headers = response.headers();
        long length = contentLength(headers);
        if (headers.contains(HttpHeaderNames.TRANSFER_ENCODING)) {
            if (length >= 0) {
                throw new Refusal(true, "both Content-Length and Transfer-Encoding");
            }
            if (response.protocolVersion() == HttpVersion.HTTP_1_0) {
                throw new Refusal(true, "Transfer-Encoding in an HTTP/1.0 answer"); // RFC 9112 6.1: faulty framing
            }
            state = lastCodingIsChunked(headers) ? State.CHUNK_SIZE : State.TO_CLOSE;
        } else if (length > 0) {
            remaining = length;
            state = State.FIXED;
        } else if (length < 0) {
            state = State.TO_CLOSE;
        }
        out.add(response);
        if (length == 0 && state == State.HEAD) {
            out.add(LastHttpContent.EMPTY_LAST_CONTENT);
        }
        return true;
    }

    private static void skipControlBytes(ByteBuf in) {
        int i = in.readerIndex();
        int end = in.writerIndex();
        while (i < end) {
            byte b = in.getByte(i);
            if ((b & 0xFF) > ' ' && b != 0x7F) {
                break;
            }
            i++;
        }
        in.readerIndex(i);
    }

    /**
     * The index just past the CR LF of the empty line that ends the block starting at the reader index (a head:
     * status line first; a trailer: fields only), or −1 while it has not all arrived. Resumes at {@link #scanned}.
     */
    private int blockEnd(ByteBuf in, boolean head) {
        int start = in.readerIndex();
        int limit = in.writerIndex();
        int line = start + scanned;
        if (scanned == 0) {
            blockLines = 0; // a new block (a resumed one keeps the lines it counted)
        }
        for (;;) {
            int lf = in.indexOf(line, limit, (byte) '\n');
            if (lf < 0) {
                scanned = line - start;
                int open = limit - line;
                if (head && line == start ? open > MAX_STATUS_LINE + 1 : limit - start > MAX_HEAD + headRoom(head)) {
                    throw new Refusal(head, head && line == start ? "status line longer than " + MAX_STATUS_LINE
                            + " bytes" : "header fields longer than " + MAX_HEAD + " bytes");
                }
                return -1;
            }
            if (lf == line || in.getByte(lf - 1) != '\r') {
                throw new Refusal(head, "a line ended by a bare LF");
            }
            if (head && line == start) {
                if (lf - 1 - start > MAX_STATUS_LINE) {
                    throw new Refusal(true, "status line longer than " + MAX_STATUS_LINE + " bytes");
                }
            } else if (lf - line == 1) {
                return lf + 1; // the empty line
            }
            if (lf + 1 - start > MAX_HEAD + headRoom(head)) {
                throw new Refusal(head, "header fields longer than " + MAX_HEAD + " bytes");
            }
            line = lf + 1;
            blockLines++;
        }
    }

    /** The room a head's status line takes on top of {@link #MAX_HEAD}. */
    private static int headRoom(boolean head) {
        return head ? MAX_STATUS_LINE + 2 : 0;
    }

    /** The head in {@code h}, with room for {@code fields} header fields (the lines {@link #blockEnd} counted). */
    private static HttpResponse parseHead(byte[] h, int fields) {
        checkLineEnds(h, true);
        int eol = indexOf(h, 0, (byte) '\r');
        int sp = indexOf(h, 0, (byte) ' ');
        if (sp < 0 || sp > eol) {
            throw new Refusal(true, "status line without a status code");
        }
        HttpVersion version = version(h, sp);
        int c = sp;
        while (c < eol && h[c] == ' ') {
            c++;
        }
        if (eol - c < 3 || !digit(h[c]) || !digit(h[c + 1]) || !digit(h[c + 2]) || c + 3 < eol && h[c + 3] != ' ') {
            throw new Refusal(true, "status code not three digits");
        }
        int code = (h[c] - '0') * 100 + (h[c + 1] - '0') * 10 + (h[c + 2] - '0');
        HttpHeaders headers = ArrayHttpHeaders.validating(fields);
        readFields(h, eol + 2, headers, false);
        return new DefaultHttpResponse(version, HttpResponseStatus.valueOf(code), headers);
    }

    private static HttpVersion version(byte[] h, int end) {
        if (end == 8 && h[0] == 'H' && h[1] == 'T' && h[2] == 'T' && h[3] == 'P' && h[4] == '/' && h[5] == '1'
                && h[6] == '.') {
            if (h[7] == '1') {
                return HttpVersion.HTTP_1_1;
            }
            if (h[7] == '0') {
                return HttpVersion.HTTP_1_0;
            }
        }
        try {
            return HttpVersion.valueOf(new String(h, 0, end, StandardCharsets.ISO_8859_1));
        } catch (IllegalArgumentException e) {
            throw new Refusal(true, "not an HTTP version: " + e.getMessage());
        }
    }

    /**
     * Adds the fields of the lines from {@code at} (each ended by CR LF, the last one empty) to {@code headers};
     * a trailer's framing fields are dropped.
     */
    private static void readFields(byte[] h, int at, HttpHeaders headers, boolean trailer) {
        CharSequence name = null;
        CharSequence value = null;
        for (;;) {
            int eol = indexOf(h, at, (byte) '\r');
            if (eol == at) {
                break;
            }
            if (h[at] == ' ' || h[at] == '\t') {
                if (name == null) {
                    throw new Refusal(!trailer, "a folded line with no field before it");
                }
                int vs = HeadBytes.skipBlanks(h, at, eol);
                int ve = HeadBytes.trimEnd(h, vs, eol);
                value = ve == vs ? value : value.length() == 0 ? view(h, vs, ve)
                        : new AsciiString(value + " " + new String(h, vs, ve - vs, StandardCharsets.ISO_8859_1));
            } else {
                add(headers, name, value, trailer);
                int colon = indexOf(h, at, (byte) ':');
                if (colon < 0 || colon > eol) {
                    throw new Refusal(!trailer, "a field without a colon");
                }
                int ne = HeadBytes.trimEnd(h, at, colon);
                if (ne == at) {
                    throw new Refusal(!trailer, "a field without a name");
                }
                name = name(h, at, ne);
                int vs = HeadBytes.skipBlanks(h, colon + 1, eol);
                int ve = HeadBytes.trimEnd(h, vs, eol);
                AsciiString known = ve > vs ? KNOWN_VALUES.find(h, vs, ve - vs) : null;
                value = known != null ? known : view(h, vs, ve);
            }
            at = eol + 2;
        }
        add(headers, name, value, trailer);
    }

    private static void add(HttpHeaders headers, CharSequence name, CharSequence value, boolean trailer) {
        if (name == null) {
            return;
        }
        if (trailer && (HttpHeaderNames.CONTENT_LENGTH.contentEqualsIgnoreCase(name)
                || HttpHeaderNames.TRANSFER_ENCODING.contentEqualsIgnoreCase(name)
                || HttpHeaderNames.TRAILER.contentEqualsIgnoreCase(name))) {
            return;
        }
        try {
            headers.add(name, value);
        } catch (IllegalArgumentException e) {
            throw new Refusal(!trailer, e.getMessage());
        }
    }

    private static CharSequence name(byte[] h, int start, int end) {
        AsciiString known = KNOWN.find(h, start, end - start);
        return known != null ? known : view(h, start, end);
    }

    private static AsciiString view(byte[] h, int start, int end) {
        return end == start ? AsciiString.EMPTY_STRING : new AsciiString(h, start, end - start, false);
    }

    /** Every LF is preceded by CR and every CR followed by LF. */
    private static void checkLineEnds(byte[] h, boolean head) {
        for (int i = 0; i < h.length; i++) {
            byte b = h[i];
            if (b == '\r' ? i + 1 == h.length || h[i + 1] != '\n' : b == '\n' && (i == 0 || h[i - 1] != '\r')) {
                throw new Refusal(head, "a bare CR or LF in a line");
            }
        }
    }

    private static long contentLength(HttpHeaders headers) {
        long length = -1;
        for (int at = ArrayHttpHeaders.nextValue(headers, HttpHeaderNames.CONTENT_LENGTH, 0); at >= 0;
                at = ArrayHttpHeaders.nextValue(headers, HttpHeaderNames.CONTENT_LENGTH, at + 1)) {
            CharSequence v = ArrayHttpHeaders.valueAt(headers, HttpHeaderNames.CONTENT_LENGTH, at);
            int i = 0;
            int n = v.length();
            do {
                int comma = i;
                while (comma < n && v.charAt(comma) != ',') {
                    comma++;
                }
                long one = decimal(v, i, comma);
                if (length >= 0 && one != length) {
                    throw new Refusal(true, "Content-Length values that differ");
                }
                length = one;
                i = comma + 1;
            } while (i <= n);
        }
        return length;
    }

    private static long decimal(CharSequence v, int start, int end) {
        while (start < end && blank(v.charAt(start))) {
            start++;
        }
        while (end > start && blank(v.charAt(end - 1))) {
            end--;
        }
        if (end == start || end - start > 18) {
            throw new Refusal(true, "Content-Length not a number");
        }
        long n = 0;
        for (int i = start; i < end; i++) {
            char c = v.charAt(i);
            if (c < '0' || c > '9') {
                throw new Refusal(true, "Content-Length not a number");
            }
            n = n * 10 + (c - '0');
        }
        return n;
    }

    private static boolean lastCodingIsChunked(HttpHeaders headers) {
        CharSequence last = null;
        for (int at = ArrayHttpHeaders.nextValue(headers, HttpHeaderNames.TRANSFER_ENCODING, 0); at >= 0;
                at = ArrayHttpHeaders.nextValue(headers, HttpHeaderNames.TRANSFER_ENCODING, at + 1)) {
            last = ArrayHttpHeaders.valueAt(headers, HttpHeaderNames.TRANSFER_ENCODING, at);
        }
        if (last == null) {
            return false;
        }
        int end = last.length();
        while (end > 0 && blank(last.charAt(end - 1))) {
            end--;
        }
        int start = end;
        while (start > 0 && last.charAt(start - 1) != ',' && !blank(last.charAt(start - 1))) {
            start--;
        }
        return end - start == CHUNKED.length()
                && CHUNKED.contentEqualsIgnoreCase(last.subSequence(start, end));
    }

    // ---- chunked body ----

    private boolean readChunkSize(ByteBuf in) {
        int start = in.readerIndex();
        int lf = in.indexOf(start, Math.min(in.writerIndex(), start + MAX_STATUS_LINE + 2), (byte) '\n');
        if (lf < 0) {
            if (in.readableBytes() > MAX_STATUS_LINE + 1) {
                throw new Refusal(false, "chunk-size line longer than " + MAX_STATUS_LINE + " bytes");
            }
            return false;
        }
        if (lf == start || in.getByte(lf - 1) != '\r') {
            throw new Refusal(false, "chunk-size line not ended by CR LF");
        }
        int end = lf - 1;
        long size = 0;
        int i = start;
        for (; i < end; i++) {
            int d = StringUtil.decodeHexNibble(in.getByte(i));
            if (d < 0) {
                break;
            }
            size = size * 16 + d;
            if (size > Integer.MAX_VALUE) {
                throw new Refusal(false, "chunk size over 2^31 - 1");
            }
        }
        if (i == start) {
            throw new Refusal(false, "chunk size not hex");
        }
        if (i < end) {
            byte b = in.getByte(i);
            if (b != ';' && b != ' ' && b != '\t') {
                throw new Refusal(false, "chunk size not hex");
            }
            for (; i < end; i++) {
                b = in.getByte(i);
                if (b < ' ' && b != '\t' || b == 0x7F) {
                    throw new Refusal(false, "a control byte in a chunk extension");
                }
            }
        }
        in.readerIndex(lf + 1);
        if (size == 0) {
            state = State.TRAILER;
        } else {
            remaining = size;
            state = State.CHUNK_DATA;
        }
        return true;
    }

    private boolean readTrailer(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        int end = blockEnd(in, false);
        if (end < 0) {
            return false;
        }
        int start = in.readerIndex();
        if (end - start == 2) {
            in.readerIndex(end);
            scanned = 0;
            end(ctx, in, out, LastHttpContent.EMPTY_LAST_CONTENT);
            return true;
        }
        byte[] t = new byte[end - start];
        in.getBytes(start, t);
        in.readerIndex(end);
        scanned = 0;
        checkLineEnds(t, false);
        HttpHeaders trailers = ArrayHttpHeaders.VALIDATING_TRAILERS.newHeaders();
        readFields(t, 0, trailers, true);
        end(ctx, in, out, trailers.isEmpty() ? LastHttpContent.EMPTY_LAST_CONTENT
                : new DefaultLastHttpContent(Unpooled.EMPTY_BUFFER, trailers));
        return true;
    }

    // ---- handing on ----

    private void piece(ChannelHandlerContext ctx, ByteBuf in, int n, List<Object> out) {
        if (pieceCount == MAX_PIECES) {
            handOnPieces(ctx, in, out);
        }
        pieces[2 * pieceCount] = in.readerIndex();
        pieces[2 * pieceCount + 1] = n;
        pieceCount++;
        in.skipBytes(n);
    }

    /** The body bytes gathered so far leave as one content. */
    private void handOnPieces(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        int count = pieceCount;
        if (count == 0) {
            return;
        }
        pieceCount = 0;
        int total = 0;
        for (int i = 0; i < count; i++) {
            total += pieces[2 * i + 1];
        }
        ByteBuf data;
        if (count == 1 && total > COPY_LIMIT) {
            data = in.retainedSlice(pieces[0], total);
        } else {
            data = ctx.alloc().buffer(total);
            for (int i = 0; i < count; i++) {
                data.writeBytes(in, pieces[2 * i], pieces[2 * i + 1]);
            }
        }
        Content c = free;
        if (c != null && c.data == null) {
            c.data = data; // released by the listener: not in any list, nobody holds it
            c.result = DecoderResult.SUCCESS;
        } else {
            c = new Content(data);
            free = c;
        }
        out.add(c);
    }

    private void end(ChannelHandlerContext ctx, ByteBuf in, List<Object> out, LastHttpContent last) {
        handOnPieces(ctx, in, out);
        out.add(last);
        state = State.HEAD;
    }

    private void refuse(ChannelHandlerContext ctx, ByteBuf in, List<Object> out, Refusal r) {
        handOnPieces(ctx, in, out);
        in.skipBytes(in.readableBytes());
        state = State.REFUSED;
        scanned = 0;
        if (r.head) {
            out.add(refusedHead(r));
        } else {
            LastHttpContent refused = new DefaultLastHttpContent(Unpooled.EMPTY_BUFFER, ArrayHttpHeaders.VALIDATING_TRAILERS);
            refused.setDecoderResult(DecoderResult.failure(r));
            out.add(refused);
        }
    }

    private static HttpResponse refusedHead(Exception cause) {
        HttpResponse refused = new DefaultHttpResponse(HttpVersion.HTTP_1_1, REFUSED, ArrayHttpHeaders.VALIDATING);
        refused.setDecoderResult(DecoderResult.failure(cause));
        return refused;
    }

    // ---- bytes ----

    private static int indexOf(byte[] h, int from, byte b) {
        for (int i = from; i < h.length; i++) {
            if (h[i] == b) {
                return i;
            }
        }
        return -1;
    }

    private static boolean blank(char c) {
        return c == ' ' || c == '\t';
    }

    private static boolean digit(byte b) {
        return b >= '0' && b <= '9';
    }

    /**
     * A content whose buffer the decoder may change once the listener released it: the listener takes the buffer
     * (or releases the content) within the call and keeps no reference to the object, so an upstream connection's
     * reads all travel in one object instead of one each. A content released another way (its buffer released
     * directly, or retained) is simply not used again; a copy, duplicate or replacement is an ordinary one.
     */
    static final class Content implements HttpContent {
        /** Null once released through this object: only then may the decoder give it the next read's bytes. */
        private ByteBuf data;
        private DecoderResult result = DecoderResult.SUCCESS;

        Content(ByteBuf data) {
            this.data = data;
        }

        @Override
        public ByteBuf content() {
            ByteBuf b = data;
            if (b == null) {
                throw new IllegalReferenceCountException(0);
            }
            return b;
        }

        @Override
        public HttpContent copy() {
            return new DefaultHttpContent(content().copy());
        }

        @Override
        public HttpContent duplicate() {
            return new DefaultHttpContent(content().duplicate());
        }

        @Override
        public HttpContent retainedDuplicate() {
            return new DefaultHttpContent(content().retainedDuplicate());
        }

        @Override
        public HttpContent replace(ByteBuf content) {
            return new DefaultHttpContent(content);
        }

        @Override
        public int refCnt() {
            ByteBuf b = data;
            return b == null ? 0 : b.refCnt();
        }

        @Override
        public HttpContent retain() {
            return retain(1);
        }

        @Override
        public HttpContent retain(int increment) {
            content().retain(increment);
            return this;
        }

        @Override
        public HttpContent touch() {
            return touch(null);
        }

        @Override
        public HttpContent touch(Object hint) {
            content().touch(hint);
            return this;
        }

        @Override
        public boolean release() {
            return release(1);
        }

        @Override
        public boolean release(int decrement) {
            if (content().release(decrement)) {
                data = null;
                return true;
            }
            return false;
        }

        @Override
        @Deprecated
        public DecoderResult getDecoderResult() {
            return result;
        }

        @Override
        public DecoderResult decoderResult() {
            return result;
        }

        @Override
        public void setDecoderResult(DecoderResult result) {
            this.result = result;
        }

        @Override
        public String toString() {
            return "UpstreamResponseDecoder.Content(" + (data == null ? "released" : data.readableBytes() + " bytes") + ")";
        }
    }

    /** Why an answer was refused, and whether its head (or else its body) was. No stack: it is a verdict. */
    static final class Refusal extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final boolean head;

        Refusal(boolean head, String message) {
            super(message, null, false, false);
            this.head = head;
        }
    }
}
