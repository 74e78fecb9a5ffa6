package io.modelgateway.core.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.exchange.ArrayHttpHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The gateway's upstream answer decoder against Netty's own HTTP client decoder (an independent implementation,
 * configured as the gateway configured it before: strict line parsing, RFC 9112 transfer coding, 4 KiB status line,
 * 64 KiB of header fields): the same bytes, cut at random places, give the same heads, the same body bytes, the same
 * trailers and the same ends, and the same refusals (of the head or of the body). The two differ, on purpose, only in
 * how a body is cut into contents (here one per read) and where noted below.
 */
class UpstreamResponseDecoderTest {
    private static final HttpDecoderConfig NETTY = new HttpDecoderConfig()
            .setHeadersFactory(ArrayHttpHeaders.VALIDATING)
            .setTrailersFactory(ArrayHttpHeaders.VALIDATING_TRAILERS)
            .setMaxInitialLineLength(4096)
            .setMaxHeaderSize(65536)
            .setMaxChunkSize(65536)
            .setUseRfc9112TransferEncoding(true)
            .setStrictLineParsing(true);

    @Test
    void randomConversations_decodeAsNettysDecoderDoes_atEveryCutting() {
        Random r = new Random(20261129);
        for (int round = 0; round < 1500; round++) {
            byte[] wire = conversation(r);
            String at = "round " + round + ": " + printable(wire);
            int[] theirCuts = cuts(r, wire.length);
            int[] ourCuts = cuts(r, wire.length);
            List<String> netty = transcript(() -> new HttpClientCodec(NETTY, false, false), wire, theirCuts, true);
            List<String> ours = transcript(UpstreamResponseDecoder::new, wire, ourCuts, false);
            assertThat(ours).as(at + " / cut at " + java.util.Arrays.toString(ourCuts) + " / ours refused: "
                    + lastRefusal).isEqualTo(netty);
            assertThat(netty).as(at).isNotEmpty();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "HTTP/1.1 200 OK\nx: y\r\n\r\n", // bare LF ends the status line
            "HTTP/1.1 200 OK\r\nx: a\rb\r\n\r\n", // bare CR in a value
            "HTTP/1.1 abc OK\r\ncontent-length: 2\r\n\r\n{}",
            "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
            "HTTP/1.1 200 OK\r\ncontent-length: 12a\r\n\r\n",
            "HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nabc",
            "HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n",
            "HTTP/1.1 200 OK\r\nx: a\u0000b\r\n\r\n",
            "HTTP/1.1 200 OK\r\ncontent-length: 2\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
            "HTTP/1.1 200 OK\r\n x: folded with nothing before\r\n\r\n",
    })
    void malformedHeads_areRefusedHeads(String wire) {
        List<String> ours = transcript(UpstreamResponseDecoder::new, wire.getBytes(StandardCharsets.ISO_8859_1),
                new int[0], false);
        assertThat(ours).as(wire).hasSize(1);
        assertThat(ours.get(0)).as(wire).startsWith("REFUSED head");
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "zz\r\nhi\r\n0\r\n\r\n",
            "2\r\nhiX\r\n0\r\n\r\n",
            "2\nhi\r\n0\r\n\r\n",
            "fffffffff\r\n",
            "2;ext=\u0001\r\nhi\r\n",
            "\r\nhi\r\n",
    })
    void malformedChunks_areRefusedBodies_afterTheHead(String body) {
        byte[] wire = ("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + body).getBytes(StandardCharsets.ISO_8859_1);
        List<String> ours = transcript(UpstreamResponseDecoder::new, wire, new int[0], false);
        assertThat(ours.get(0)).startsWith("HEAD 200");
        assertThat(ours.get(ours.size() - 1)).as(body).startsWith("REFUSED body");
    }

    @Test
    void limits_statusLineAndFields_asNettysDecoderWasConfigured() {
        String longStatus = "HTTP/1.1 200 " + "x".repeat(4100) + "\r\n\r\n";
        String longFields = "HTTP/1.1 200 OK\r\n" + ("x-pad: " + "p".repeat(1000) + "\r\n").repeat(70) + "\r\n";
        String fine = "HTTP/1.1 200 OK\r\n" + ("x-pad: " + "p".repeat(1000) + "\r\n").repeat(60)
                + "content-length: 0\r\n\r\n";
        for (String wire : List.of(longStatus, longFields, fine)) {
            byte[] b = wire.getBytes(StandardCharsets.ISO_8859_1);
            Random r = new Random(wire.length());
            List<String> netty = transcript(() -> new HttpClientCodec(NETTY, false, false), b, cuts(r, b.length), true);
            List<String> ours = transcript(UpstreamResponseDecoder::new, b, cuts(r, b.length), false);
            assertThat(ours).isEqualTo(netty);
        }
        assertThat(transcript(UpstreamResponseDecoder::new, longFields.getBytes(StandardCharsets.ISO_8859_1),
                new int[0], false).get(0)).startsWith("REFUSED head");
    }

    @Test
    void aBurstOfChunksInOneRead_leavesAsOneContent_andNothingOfTheReadIsHeld() {
        StringBuilder wire = new StringBuilder("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                + "transfer-encoding: chunked\r\n\r\n");
        StringBuilder body = new StringBuilder();
        for (int i = 0; i < 50; i++) {
            String event = "data: {\"i\":" + i + "}\n\n";
            body.append(event);
            wire.append(Integer.toHexString(event.length())).append("\r\n").append(event).append("\r\n");
        }
        wire.append("0\r\n\r\n");
        EmbeddedChannel ch = new EmbeddedChannel(new UpstreamResponseDecoder());
        ByteBuf read = Unpooled.copiedBuffer(wire, StandardCharsets.ISO_8859_1);
        ch.writeInbound(read);
        assertThat(read.refCnt()).isZero(); // copied out: the read is not held by what was handed on
        HttpResponse head = ch.readInbound();
        assertThat(head.headers().get("content-type")).isEqualTo("text/event-stream");
        HttpContent content = ch.readInbound();
        assertThat(content).isNotInstanceOf(LastHttpContent.class);
        assertThat(content.content().toString(StandardCharsets.ISO_8859_1)).isEqualTo(body.toString());
        content.release();
        Object last = ch.readInbound();
        assertThat(last).isSameAs(LastHttpContent.EMPTY_LAST_CONTENT);
        assertThat((Object) ch.readInbound()).isNull();
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void oneContentObject_carriesRead_afterRead_onlyOnceItWasReleased() {
        EmbeddedChannel ch = new EmbeddedChannel(new UpstreamResponseDecoder());
        ch.writeInbound(Unpooled.copiedBuffer("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n",
                StandardCharsets.ISO_8859_1));
        ReferenceCountUtil.release(ch.readInbound());
        HttpContent first = ch.readInbound();
        assertThat(first.content().toString(StandardCharsets.ISO_8859_1)).isEqualTo("abc");
        first.release();
        assertThat(first.refCnt()).isZero();
        ch.writeInbound(Unpooled.copiedBuffer("2\r\nde\r\n", StandardCharsets.ISO_8859_1));
        HttpContent second = ch.readInbound();
        assertThat(second).isSameAs(first); // released: free again
        assertThat(second.content().toString(StandardCharsets.ISO_8859_1)).isEqualTo("de");
        second.retain(); // held on (say, queued): the next read gets its own object
        ch.writeInbound(Unpooled.copiedBuffer("1\r\nf\r\n1\r\ng\r\n", StandardCharsets.ISO_8859_1));
        HttpContent third = ch.readInbound();
        assertThat(third).isNotSameAs(second);
        assertThat(third.content().toString(StandardCharsets.ISO_8859_1)).isEqualTo("fg");
        assertThat(second.content().toString(StandardCharsets.ISO_8859_1)).isEqualTo("de");
        second.release(2);
        third.release();
        ch.writeInbound(Unpooled.copiedBuffer("0\r\n\r\n", StandardCharsets.ISO_8859_1));
        assertThat((Object) ch.readInbound()).isSameAs(LastHttpContent.EMPTY_LAST_CONTENT);
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void aCloseInsideAHead_refusesItOnceTheStatusLineEnded_asNettysDecoderDoes() {
        for (String wire : List.of("HTTP/1.1 200 O", "HTTP/1.1 200 OK\r\n", "HTTP/1.1 200 OK\r\nx-a: 1\r\nx-b",
                "\r\n\r\n")) {
            byte[] b = wire.getBytes(StandardCharsets.ISO_8859_1);
            List<String> netty = transcript(() -> new HttpClientCodec(NETTY, false, false), b, new int[0], true);
            List<String> ours = transcript(UpstreamResponseDecoder::new, b, new int[0], false);
            assertThat(ours).as(wire).isEqualTo(netty);
            assertThat(ours).as(wire).isEqualTo(wire.startsWith("HTTP/1.1 200 OK\r\n") ? List.of("REFUSED head")
                    : List.of());
        }
    }

    @Test
    void aLargeBodyRun_isSliced_notCopied() {
        byte[] body = new byte[UpstreamResponseDecoder.COPY_LIMIT + 1];
        new Random(7).nextBytes(body);
        ByteBuf read = Unpooled.buffer();
        read.writeCharSequence("HTTP/1.1 200 OK\r\ncontent-length: " + body.length + "\r\n\r\n", StandardCharsets.ISO_8859_1);
        read.writeBytes(body);
        EmbeddedChannel ch = new EmbeddedChannel(new UpstreamResponseDecoder());
        ch.writeInbound(read);
        ReferenceCountUtil.release(ch.readInbound());
        HttpContent content = ch.readInbound();
        assertThat(read.refCnt()).isEqualTo(1); // the slice holds the read
        assertThat(ByteBufUtilBytes.of(content.content())).isEqualTo(body);
        content.release();
        assertThat(read.refCnt()).isZero();
        assertThat((Object) ch.readInbound()).isSameAs(LastHttpContent.EMPTY_LAST_CONTENT);
        ch.finish();
    }

    @Test
    void wellKnownNames_areShared_otherNamesAndValuesKeepTheirBytes() {
        EmbeddedChannel ch = new EmbeddedChannel(new UpstreamResponseDecoder());
        ch.writeInbound(Unpooled.copiedBuffer("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                + "Content-Type2 :  a b \t\r\nX-Odd: \r\ncontent-length: 0\r\n\r\n", StandardCharsets.ISO_8859_1));
        HttpResponse head = ch.readInbound();
        List<Map.Entry<String, String>> entries = head.headers().entries();
        assertThat(entries.toString()).isEqualTo("[content-type=application/json, Content-Type2=a b, X-Odd=, content-length=0]");
        head.headers().iteratorCharSequence().forEachRemaining(e -> {
            if (e.getKey().toString().equals("content-type")) {
                assertThat(e.getKey()).isSameAs(io.netty.handler.codec.http.HttpHeaderNames.CONTENT_TYPE);
            }
        });
        assertThat((Object) ch.readInbound()).isSameAs(LastHttpContent.EMPTY_LAST_CONTENT);
        ch.finish();
    }

    // ---- the random conversations ----

    private static byte[] conversation(Random r) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int answers = 1 + r.nextInt(3);
        for (int a = 0; a < answers; a++) {
            if (r.nextInt(6) == 0) {
                write(out, "\r\n"); // stray line ends before a status line are skipped
            }
            if (r.nextInt(8) == 0) {
                write(out, "HTTP/1.1 " + (r.nextBoolean() ? "100 Continue" : "103 Early Hints") + "\r\n"
                        + (r.nextBoolean() ? "link: </a.css>; rel=preload\r\n" : "") + "\r\n");
            }
            boolean last = a == answers - 1;
            int framing = r.nextInt(last ? 4 : 3); // 0 length, 1 chunked, 2 no body (204/304), 3 to the close
            int[] codes = {200, 201, 400, 404, 429, 500, 503};
            int code = framing == 2 ? (r.nextBoolean() ? 204 : 304) : codes[r.nextInt(codes.length)];
            String version = r.nextInt(6) == 0 ? "HTTP/1.0" : "HTTP/1.1";
            String reason = switch (r.nextInt(4)) {
                case 0 -> "";
                case 1 -> " ";
                case 2 -> " Some Reason";
                default -> " OK";
            };
            StringBuilder head = new StringBuilder(version + " " + code + reason + "\r\n");
            int fields = r.nextInt(7);
            for (int i = 0; i < fields; i++) {
                head.append(field(r));
            }
            byte[] body = randomBody(r, framing == 2 ? 0 : r.nextInt(4) == 0 ? 0 : r.nextInt(3000));
            switch (framing) {
                case 0 -> head.append(r.nextBoolean() ? "content-length" : "Content-Length").append(':')
                        .append(r.nextBoolean() ? " " : "").append(body.length).append(r.nextBoolean() ? " " : "")
                        .append("\r\n");
                case 1 -> head.append(r.nextBoolean() ? "transfer-encoding: chunked" : "Transfer-Encoding:  Chunked ")
                        .append("\r\n");
                default -> {
                }
            }
            if (r.nextInt(5) == 0) {
                head.append("x-folded: first\r\n").append(r.nextBoolean() ? " " : "\t").append("second part\r\n");
            }
            head.append("\r\n");
            write(out, head.toString());
            if (framing == 1) {
                int at = 0;
                while (at < body.length) {
                    int n = Math.min(body.length - at, 1 + r.nextInt(400));
                    String size = Integer.toHexString(n);
                    write(out, (r.nextBoolean() ? size.toUpperCase() : size) + (r.nextInt(6) == 0 ? ";ext=v" : "") + "\r\n");
                    out.write(body, at, n);
                    write(out, "\r\n");
                    at += n;
                }
                write(out, "0\r\n" + (r.nextInt(4) == 0 ? "x-trailer: t1\r\nContent-Length: 5\r\n" : "") + "\r\n");
            } else {
                out.write(body, 0, body.length);
            }
        }
        return out.toByteArray();
    }

    private static String field(Random r) {
        String[] names = {"content-type", "Content-Type", "x-request-id", "X-Request-Id", "date", "server", "vary",
                "openai-processing-ms", "x-ratelimit-remaining-tokens", "set-cookie", "cache-control", "x-custom"};
        StringBuilder value = new StringBuilder();
        int n = r.nextInt(30);
        for (int i = 0; i < n; i++) {
            int c = r.nextInt(10) == 0 ? (r.nextBoolean() ? ' ' : '\t') : 0x21 + r.nextInt(0x5E);
            value.append((char) c);
        }
        String pre = switch (r.nextInt(3)) {
            case 0 -> "";
            case 1 -> " ";
            default -> " \t ";
        };
        return names[r.nextInt(names.length)] + ":" + pre + value + (r.nextBoolean() ? "" : " ") + "\r\n";
    }

    private static byte[] randomBody(Random r, int n) {
        byte[] b = new byte[n];
        r.nextBytes(b);
        return b;
    }

    private static void write(ByteArrayOutputStream out, String s) {
        out.writeBytes(s.getBytes(StandardCharsets.ISO_8859_1));
    }

    private static int[] cuts(Random r, int length) {
        int n = r.nextInt(6);
        int[] c = new int[n];
        for (int i = 0; i < n; i++) {
            c[i] = length == 0 ? 0 : r.nextInt(length);
        }
        java.util.Arrays.sort(c);
        return c;
    }

    /**
     * What a decoder makes of {@code wire} cut at {@code cuts} and then closed: each head (status, version, fields in
     * order), each answer's body bytes whole, each end (with its trailers), each refusal (of a head or a body).
     */
    private static List<String> transcript(Supplier<ChannelHandler> decoder, byte[] wire, int[] cuts, boolean asks) {
        EmbeddedChannel ch = new EmbeddedChannel(decoder.get());
        if (asks) {
            for (int i = 0; i < 4; i++) { // Netty's client decoder pairs answers with the requests it saw go out
                ch.writeOutbound(new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/v1/x"));
            }
            for (Object o; (o = ch.readOutbound()) != null;) {
                ReferenceCountUtil.release(o);
            }
        }
        List<String> out = new ArrayList<>();
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        int from = 0;
        for (int cut : cuts) {
            ch.writeInbound(Unpooled.copiedBuffer(wire, from, cut - from)); // a copy: a decoder may compact its input in place
            drain(ch, out, body);
            from = cut;
        }
        ch.writeInbound(Unpooled.copiedBuffer(wire, from, wire.length - from));
        drain(ch, out, body);
        ch.finish();
        drain(ch, out, body);
        if (body.size() > 0) {
            out.add("BODY " + body.size() + " " + java.util.Arrays.hashCode(body.toByteArray()) + " (no end)");
        }
        return out;
    }

    /** The cause of the last refusal seen, for a failure's message. */
    private static String lastRefusal;

    private static void drain(EmbeddedChannel ch, List<String> out, ByteArrayOutputStream body) {
        for (Object o; (o = ch.readInbound()) != null;) {
            try {
                HttpObject m = (HttpObject) o;
                if (!out.isEmpty() && out.get(out.size() - 1).startsWith("REFUSED")) {
                    continue; // after a refusal the connection is the exchange's to close: nothing more counts
                }
                if (m.decoderResult().isFailure()) {
                    if (body.size() > 0) {
                        out.add("BODY " + body.size() + " " + java.util.Arrays.hashCode(body.toByteArray()));
                        body.reset();
                    }
                    out.add("REFUSED " + (m instanceof HttpResponse ? "head" : "body"));
                    lastRefusal = String.valueOf(m.decoderResult().cause());
                    continue;
                }
                if (m instanceof HttpResponse h) {
                    out.add("HEAD " + h.status().code() + " " + h.protocolVersion() + " " + h.headers().entries());
                }
                if (m instanceof HttpContent c) {
                    c.content().forEachByte(b -> {
                        body.write(b);
                        return true;
                    });
                    if (m instanceof LastHttpContent l) {
                        if (body.size() > 0) {
                            out.add("BODY " + body.size() + " " + java.util.Arrays.hashCode(body.toByteArray()));
                            body.reset();
                        }
                        out.add("END " + l.trailingHeaders().entries());
                    }
                }
            } finally {
                ReferenceCountUtil.release(o);
            }
        }
    }

    private static final class ByteBufUtilBytes {
        static byte[] of(ByteBuf b) {
            byte[] a = new byte[b.readableBytes()];
            b.getBytes(b.readerIndex(), a);
            return a;
        }
    }

    private static String printable(byte[] wire) {
        String s = new String(wire, 0, Math.min(wire.length, 300), StandardCharsets.ISO_8859_1);
        return s.replace("\r", "\\r").replace("\n", "\\n");
    }
}
