package io.modelgateway.core.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The client connection's codec against Netty's own {@code HttpServerCodec} (an independent implementation) with the
 * gateway's decoder config: the same request bytes, cut at random places, decode to the same requests (method,
 * target, version, header names as spelled and values, body bytes, trailers, refusals), and the same responses to
 * them encode to the same bytes (HEAD answers without a body, a 2xx to CONNECT without Transfer-Encoding). The codec
 * differs only in which objects a request's header names and target are, and in the room its header array has.
 */
class ClientHttpCodecTest {
    private static final String[] METHODS = {"GET", "POST", "POST", "POST", "POST", "HEAD", "PUT", "DELETE",
            "OPTIONS", "CONNECT"};
    private static final String[] OTHER_NAMES = {"x-sim-output-tokens", "X-Custom", "cookie", "x-forwarded-for",
            "Content-type", "CONTENT-LENGTH", "authorization2", "x-api-ke", "x-stainless-lan", "anthropic-versio",
            "X-API-KEY", "Bad Name", "bad:", "", "host "};
    /** Request targets: the same one repeated, ones of the same length one byte apart (also above 0x7f), others. */
    private static final String[] TARGETS = {"/api/v1/messages", "/api/v1/messages", "/api/v1/messagez",
            "/api/v1/messag\u00e9s", "/api/v1/messagis", "/api/v1/chat/completions", "/api/v1/chat/completions?a=1", "/", "*",
            "/api/v1/messages/"};

    @Test
    void randomRequests_decodeAndAnswerAsNettysServerCodecDoes() {
        Random r = new Random(20261129);
        int shared = 0;
        int sameTargets = 0;
        int sameNames = 0;
        int sameValues = 0;
        for (int round = 0; round < 2000; round++) {
            byte[] wire = requests(r);
            int[] cuts = cuts(r, wire.length);
            Run netty = run(() -> new HttpServerCodec(GatewayChannelInitializer.clientDecoderConfig()), wire, cuts);
            Run ours = run(() -> new ClientHttpCodec(GatewayChannelInitializer.clientDecoderConfig()), wire, cuts);
            String at = "round " + round + ": " + new String(wire, StandardCharsets.ISO_8859_1);
            assertThat(ours.decoded).as(at).isEqualTo(netty.decoded);
            assertThat(ours.encoded).as(at).isEqualTo(netty.encoded);
            assertThat(netty.decoded).as(at).isNotEmpty();
            shared += ours.sharedNames;
            sameTargets += ours.sameTargets;
            sameNames += ours.sameNames;
            sameValues += ours.sameValues;
        }
        assertThat(shared).as("header names decoded as the shared constants").isGreaterThan(5000);
        assertThat(sameTargets).as("request targets that are the connection's last one").isGreaterThan(50);
        assertThat(sameNames).as("unshared names that are the connection's last head's").isGreaterThan(50);
        assertThat(sameValues).as("values that are the connection's last head's (read by the fast path)")
                .isGreaterThan(100);
    }

    /**
     * Heads at the edges of what the decoder's fast path reads (and just past them, where Netty's decoder reads them):
     * decoded and answered exactly as Netty's server codec does, whole and cut at every byte.
     */
    @Test
    void headsAtTheEdgesOfTheFastPath_decodeAsNettysServerCodecDoes() {
        String many = "x-h: v\r\n".repeat(62);
        String[] wires = {
                "POST /a HTTP/1.1\r\nx:\t v \t\r\nempty:\r\nblank:  \t\r\ncontent-length: 0\r\n\r\n",
                "POST /a HTTP/1.1\r\nCONTENT-LENGTH: 5\r\n\r\nhello",
                "POST /a HTTP/1.1\r\ncontent-length: 05\r\n\r\nhello",
                "POST /a HTTP/1.1\r\ncontent-length:  5 \t\r\n\r\nhello",
                "POST /a HTTP/1.1\r\ncontent-length: 5\r\ncontent-length: 5\r\n\r\nhello",
                "POST /a HTTP/1.1\r\ncontent-length: +5\r\n\r\nhello",
                "POST /a HTTP/1.1\r\n" + many + "content-length: 1\r\n\r\nz",
                "POST /a HTTP/1.1\r\n" + many + "x-63: v\r\ncontent-length: 1\r\n\r\nz",
                "POST /a HTTP/1.1\r\nx-folded: a\r\n b\r\ncontent-length: 1\r\n\r\nz",
                "POST /a HTTP/1.1\r\nx-latin: caf\u00e9\r\ncontent-length: 1\r\n\r\nz",
                "POST /a HTTP/1.1\r\nx-del: a\u007fb\r\ncontent-length: 1\r\n\r\nz",
                "POST /a HTTP/1.1\r\nx-name : v\r\ncontent-length: 1\r\n\r\nz",
                "POST /a HTTP/1.1\r\n: v\r\ncontent-length: 1\r\n\r\nz",
                "POST /a HTTP/1.1\nx: v\r\ncontent-length: 1\r\n\r\nz",
                "POST /a HTTP/1.1\r\nx: v\ncontent-length: 1\r\n\r\nz",
                "POST  /a HTTP/1.1\r\ncontent-length: 1\r\n\r\nz",
                "POST /a HTTP/1.0\r\ncontent-length: 1\r\n\r\nz",
                "POST /a\u0001 HTTP/1.1\r\ncontent-length: 1\r\n\r\nz",
                "POSTX /a HTTP/1.1\r\ncontent-length: 1\r\n\r\nz",
                "GET /a HTTP/1.1\r\nhost: h\r\n\r\n",
                "GET /a HTTP/1.1\r\ncontent-length: 0\r\n\r\nPOST /b HTTP/1.1\r\ncontent-length: 3\r\n\r\nabc",
                "POST /a HTTP/1.1\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                "\r\nPOST /a HTTP/1.1\r\ncontent-length: 1\r\n\r\nzPOST /a HTTP/1.1\r\ncontent-length: 1\r\n\r\ny",
                "POST /a HTTP/1.1\r\ncontent-length: 999999999\r\n\r\nabc",
                "POST /a HTTP/1.1\r\nx: \u0000\r\ncontent-length: 1\r\n\r\nz",
        };
        for (String w : wires) {
            byte[] wire = w.getBytes(StandardCharsets.ISO_8859_1);
            for (int cut = 0; cut <= wire.length; cut++) {
                int[] cuts = cut == wire.length ? new int[0] : new int[] {cut};
                Run netty = run(() -> new HttpServerCodec(GatewayChannelInitializer.clientDecoderConfig()), wire,
                        cuts);
                Run ours = run(() -> new ClientHttpCodec(GatewayChannelInitializer.clientDecoderConfig()), wire, cuts);
                String at = "cut " + cut + ": " + w;
                assertThat(ours.decoded).as(at).isEqualTo(netty.decoded);
                assertThat(ours.encoded).as(at).isEqualTo(netty.encoded);
            }
        }
    }

    @Test
    void aClientsOwnNames_inTheSamePlaces_areTheLastHeadsNames_spelledAsSent() {
        EmbeddedChannel ch = new EmbeddedChannel(new ClientHttpCodec(GatewayChannelInitializer.clientDecoderConfig()));
        List<List<CharSequence>> heads = new ArrayList<>();
        for (String second : new String[] {"X-Custom", "X-Custom", "X-CustoM", "x-other-name"}) {
            ch.writeInbound(Unpooled.copiedBuffer("POST /a HTTP/1.1\r\nx-sim-shape: paced\r\nhost: a\r\n" + second
                    + ": 1\r\ncontent-length: 0\r\n\r\n", StandardCharsets.US_ASCII));
            HttpRequest req = ch.readInbound();
            List<CharSequence> names = new ArrayList<>();
            req.headers().iteratorCharSequence().forEachRemaining(e -> names.add(e.getKey()));
            heads.add(names);
            ReferenceCountUtil.release(req);
            ReferenceCountUtil.release(ch.readInbound());
        }
        assertThat(heads.get(3)).extracting(CharSequence::toString)
                .containsExactly("x-sim-shape", "host", "x-other-name", "content-length");
        assertThat(heads.get(1).get(0)).isSameAs(heads.get(0).get(0));
        assertThat(heads.get(3).get(0)).isSameAs(heads.get(0).get(0));
        assertThat(heads.get(1).get(2)).isSameAs(heads.get(0).get(2));
        assertThat(heads.get(2).get(2)).isNotSameAs(heads.get(1).get(2)).hasToString("X-CustoM");
        assertThat(heads.get(3).get(2)).hasToString("x-other-name");
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void commonNames_spelledExactly_areTheSharedConstants_othersAreNot() {
        EmbeddedChannel ch = new EmbeddedChannel(new ClientHttpCodec(GatewayChannelInitializer.clientDecoderConfig()));
        ch.writeInbound(Unpooled.copiedBuffer("POST /api/v1/chat/completions HTTP/1.1\r\nhost: a\r\n"
                + "authorization: Bearer k\r\nx-stainless-os: Linux\r\nAuthorization2: x\r\nUser-Agent: u\r\n"
                + "AUTHORIZATION: z\r\ncontent-length: 0\r\n\r\n", StandardCharsets.US_ASCII));
        HttpRequest req = ch.readInbound();
        List<CharSequence> names = new ArrayList<>();
        req.headers().iteratorCharSequence().forEachRemaining(e -> names.add(e.getKey()));
        assertThat(names).extracting(CharSequence::toString).containsExactly("host", "authorization",
                "x-stainless-os", "Authorization2", "User-Agent", "AUTHORIZATION", "content-length");
        assertThat(names.get(0)).isSameAs(HttpHeaderNames.HOST);
        assertThat(names.get(1)).isSameAs(HttpHeaderNames.AUTHORIZATION);
        assertThat(names.get(2)).isSameAs(ClientHttpCodec.sharedName(bytes("x-stainless-os"), 0, 14));
        assertThat(names.get(4)).isSameAs(ClientHttpCodec.sharedName(bytes("User-Agent"), 0, 10));
        assertThat((Object) ClientHttpCodec.sharedName(bytes("Authorization2"), 0, 14)).isNull();
        assertThat((Object) ClientHttpCodec.sharedName(bytes("AUTHORIZATION"), 0, 13)).isNull();
        assertThat(req.headers().get("Authorization")).isEqualTo("Bearer k"); // lookups ignore case, as before
        ReferenceCountUtil.release(req);
        ReferenceCountUtil.release(ch.readInbound());
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void everySharedName_isFoundByItsOwnBytes_atAnyOffset() {
        for (AsciiString n : ClientHttpCodec.SHARED_NAMES) {
            byte[] line = ("xx" + n + ": v").getBytes(StandardCharsets.US_ASCII);
            assertThat((Object) ClientHttpCodec.sharedName(line, 2, n.length())).as(n.toString()).isSameAs(n);
            assertThat((Object) ClientHttpCodec.sharedName(line, 1, n.length())).as(n.toString()).isNull();
        }
        assertThat(Arrays.stream(ClientHttpCodec.SHARED_NAMES).map(AsciiString::toString).distinct().count())
                .isEqualTo(ClientHttpCodec.SHARED_NAMES.length);
    }

    // ------------------------------------------------------------------ the runs

    private record Run(List<String> decoded, List<String> encoded, int sharedNames, int sameTargets, int sameNames,
            int sameValues) {
    }

    /**
     * Feeds {@code wire} in pieces cut at {@code cuts}, answering every request decoded (after its last content) with
     * a response drawn from {@code r}'s seed, and records what was decoded and what the responses encoded to.
     */
    private static Run run(Supplier<ChannelHandler> codec, byte[] wire, int[] cuts) {
        EmbeddedChannel ch = new EmbeddedChannel(codec.get());
        List<String> decoded = new ArrayList<>();
        List<String> encoded = new ArrayList<>();
        int shared = 0;
        int sameTargets = 0;
        int sameNames = 0;
        int sameValues = 0;
        String lastTarget = null;
        List<CharSequence> lastNames = new ArrayList<>();
        List<CharSequence> lastValues = new ArrayList<>();
        Random answers = new Random(wire.length * 31L + cuts.length);
        int from = 0;
        for (int i = 0; i <= cuts.length; i++) {
            int to = i < cuts.length ? cuts[i] : wire.length;
            if (to > from) {
                ch.writeInbound(Unpooled.copiedBuffer(wire, from, to - from));
            }
            from = to;
            Object m;
            while ((m = ch.readInbound()) != null) {
                try {
                    if (m instanceof HttpRequest req) {
                        List<CharSequence> names = new ArrayList<>();
                        List<CharSequence> values = new ArrayList<>();
                        StringBuilder b = new StringBuilder("REQ ").append(req.method()).append(' ')
                                .append(req.uri()).append(' ').append(req.protocolVersion()).append(' ')
                                .append(req.decoderResult());
                        for (Map.Entry<CharSequence, CharSequence> e : (Iterable<Map.Entry<CharSequence,
                                CharSequence>>) req.headers()::iteratorCharSequence) {
                            b.append(" [").append(e.getKey()).append("=").append(e.getValue()).append(']');
                            if (e.getValue().length() > 0 && lastValues.stream().anyMatch(v -> v == e.getValue())) {
                                sameValues++;
                            }
                            values.add(e.getValue());
                            if (e.getKey() instanceof AsciiString a
                                    && ClientHttpCodec.sharedName(a.array(), a.arrayOffset(), a.length()) == a) {
                                shared++;
                            } else {
                                names.add(e.getKey());
                                if (lastNames.stream().anyMatch(n -> n == e.getKey())) {
                                    sameNames++;
                                }
                            }
                        }
                        lastNames = names;
                        lastValues = values;
                        decoded.add(b.toString());
                        if (req.uri() == lastTarget) {
                            sameTargets++;
                        }
                        lastTarget = req.uri();
                    }
                    if (m instanceof HttpContent c) {
                        decoded.add("BODY " + c.content().toString(StandardCharsets.ISO_8859_1) + " "
                                + c.decoderResult().isSuccess());
                    }
                    if (m instanceof LastHttpContent last) {
                        decoded.add("END " + last.trailingHeaders());
                        if (last.decoderResult().isSuccess()) {
                            answer(ch, answers, encoded);
                        }
                    }
                } finally {
                    ReferenceCountUtil.release((HttpObject) m);
                }
            }
        }
        ch.finishAndReleaseAll();
        return new Run(decoded, encoded, shared, sameTargets, sameNames, sameValues);
    }

    /** One response, of a shape drawn from {@code r}: full with a length, chunked, or a 204. */
    private static void answer(EmbeddedChannel ch, Random r, List<String> encoded) {
        int shape = r.nextInt(3);
        if (shape == 0) {
            ByteBuf body = Unpooled.copiedBuffer("{\"ok\":true}", StandardCharsets.US_ASCII);
            DefaultFullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                    body);
            HttpUtil.setContentLength(res, body.readableBytes());
            ch.writeOutbound(res);
        } else if (shape == 1) {
            DefaultHttpResponse res = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            HttpUtil.setTransferEncodingChunked(res, true);
            ch.writeOutbound(res, new DefaultHttpContent(Unpooled.copiedBuffer("data: x\n\n",
                    StandardCharsets.US_ASCII)), new DefaultLastHttpContent());
        } else {
            ch.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.NO_CONTENT));
        }
        ByteBuf out;
        StringBuilder b = new StringBuilder();
        while ((out = ch.readOutbound()) != null) {
            b.append(out.toString(StandardCharsets.ISO_8859_1));
            out.release();
        }
        encoded.add(b.toString());
    }

    // ------------------------------------------------------------------ the requests

    /** One to three pipelined requests, a few of them malformed. */
    private static byte[] requests(Random r) {
        StringBuilder all = new StringBuilder();
        String last = null;
        int n = 1 + r.nextInt(3);
        for (int i = 0; i < n; i++) {
            if (last != null && r.nextInt(3) == 0) {
                all.append(last); // a keep-alive client sending the same request again
                continue;
            }
            StringBuilder b = new StringBuilder();
            String method = METHODS[r.nextInt(METHODS.length)];
            b.append(method).append(' ').append(method.equals("CONNECT") ? "example.com:443"
                            : TARGETS[r.nextInt(TARGETS.length)])
                    .append(r.nextInt(8) == 0 ? " HTTP/1.0" : " HTTP/1.1").append("\r\n");
            int headers = r.nextInt(14);
            for (int h = 0; h < headers; h++) {
                String name = r.nextInt(3) > 0
                        ? ClientHttpCodec.SHARED_NAMES[r.nextInt(ClientHttpCodec.SHARED_NAMES.length)].toString()
                        : OTHER_NAMES[r.nextInt(OTHER_NAMES.length)];
                if (name.equalsIgnoreCase("content-length") || name.equalsIgnoreCase("transfer-encoding")
                        || name.equalsIgnoreCase("expect")) {
                    name = r.nextBoolean() ? "x-request-id" : "X-Other"; // framing is chosen below
                }
                if (r.nextInt(6) == 0) {
                    name = flipCase(name, r);
                }
                b.append(name).append(':').append(r.nextBoolean() ? " " : "").append(value(r)).append("\r\n");
            }
            int body = r.nextInt(4);
            if (body == 1) {
                String content = "{\"model\":\"m\",\"n\":" + r.nextInt(1000) + "}";
                b.append("Content-Length: ").append(content.length()).append("\r\n\r\n").append(content);
            } else if (body == 2) {
                b.append("transfer-encoding: chunked\r\n\r\n5\r\nhello\r\n3;ext=1\r\nabc\r\n0\r\n");
                if (r.nextBoolean()) {
                    b.append("x-trailer: t\r\n");
                }
                b.append("\r\n");
            } else if (body == 3 && r.nextInt(4) == 0) {
                b.append("content-length: 2\r\ncontent-length: 3\r\n\r\nab"); // refused: two lengths
            } else {
                b.append("\r\n");
            }
            last = b.toString();
            all.append(last);
        }
        return all.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    private static String value(Random r) {
        String alphabet = "abcdefXYZ0123456789-_.;=/ \t\"";
        StringBuilder v = new StringBuilder();
        int len = r.nextInt(20);
        for (int i = 0; i < len; i++) {
            v.append(alphabet.charAt(r.nextInt(alphabet.length())));
        }
        if (r.nextInt(40) == 0) {
            v.append('\u0001'); // a control byte: refused by the validating headers
        }
        return v.toString();
    }

    private static String flipCase(String s, Random r) {
        char[] c = s.toCharArray();
        int i = c.length == 0 ? 0 : r.nextInt(c.length);
        if (i < c.length) {
            c[i] = Character.isUpperCase(c[i]) ? Character.toLowerCase(c[i]) : Character.toUpperCase(c[i]);
        }
        return new String(c);
    }

    private static int[] cuts(Random r, int length) {
        int n = r.nextInt(4);
        int[] c = new int[n];
        for (int i = 0; i < n; i++) {
            c[i] = length == 0 ? 0 : r.nextInt(length);
        }
        Arrays.sort(c);
        return c;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
