package io.modelgateway.core.exchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link ArrayHttpHeaders} against Netty's own {@code DefaultHttpHeaders}, the independent implementation it stands
 * in for: the same operations in the same order must read back the same, and a decoder given either factory must
 * accept and refuse the same heads.
 */
class ArrayHttpHeadersTest {
    private static final CharSequence[] NAMES = {
        "Content-Type", "content-type", AsciiString.cached("content-type"), "CONTENT-LENGTH", "content-length",
        "x-request-id", "X-Request-Id", "Connection", "anthropic-beta", "Anthropic-Beta", "x-a", "x-b",
        AsciiString.cached("authorization")};
    private static final String[] VALUES = {"a", "b", "close", "keep-alive", "Close, upgrade", " x , y ,z", "", "42"};

    @Test
    void randomOperations_readBackAsNettysHeaders() {
        Random rnd = new Random(7);
        for (int run = 0; run < 300; run++) {
            HttpHeaders ours = ArrayHttpHeaders.TRUSTED.newHeaders();
            HttpHeaders netty = DefaultHttpHeadersFactory.headersFactory().withValidation(false).newHeaders();
            for (int op = 0; op < 40; op++) {
                CharSequence name = NAMES[rnd.nextInt(NAMES.length)];
                String value = VALUES[rnd.nextInt(VALUES.length)];
                switch (rnd.nextInt(8)) {
                    case 0, 1 -> {
                        ours.add(name, value);
                        netty.add(name, value);
                    }
                    case 2 -> {
                        ours.set(name, value);
                        netty.set(name, value);
                    }
                    case 3 -> {
                        ours.remove(name);
                        netty.remove(name);
                    }
                    case 4 -> {
                        ours.setInt(name, op);
                        netty.setInt(name, op);
                    }
                    case 5 -> {
                        ours.set(name, List.of(value, "v" + op));
                        netty.set(name, List.of(value, "v" + op));
                    }
                    case 6 -> {
                        ours.add(name, List.of(value));
                        netty.add(name, List.of(value));
                    }
                    default -> {
                        if (rnd.nextInt(10) == 0) {
                            ours.clear();
                            netty.clear();
                        }
                    }
                }
                assertSame(ours, netty, run, op);
            }
            assertThat(ours.copy().entries()).isEqualTo(netty.copy().entries());
        }
    }

    private static void assertSame(HttpHeaders ours, HttpHeaders netty, int run, int op) {
        String at = "run " + run + ", op " + op;
        assertThat(ours.size()).as(at).isEqualTo(netty.size());
        assertThat(ours.isEmpty()).as(at).isEqualTo(netty.isEmpty());
        assertThat(entries(ours)).as(at).isEqualTo(entries(netty));
        // Netty's names() can list one name twice (spelled as a String and as an AsciiString): compare the names.
        assertThat(lowerCase(ours.names())).as(at).isEqualTo(lowerCase(netty.names()));
        for (CharSequence name : NAMES) {
            assertThat(ours.get(name)).as(at + " get " + name).isEqualTo(netty.get(name));
            assertThat(ours.getAll(name)).as(at + " getAll " + name).isEqualTo(netty.getAll(name));
            assertThat(ours.contains(name)).as(at).isEqualTo(netty.contains(name));
            assertThat(ours.getInt(name)).as(at + " getInt " + name).isEqualTo(netty.getInt(name));
            // nextValue / valueAt walk what Netty's getAll lists, on ours (in place) and on Netty's (through getAll).
            assertThat(walk(ours, name)).as(at + " walk " + name).isEqualTo(netty.getAll(name));
            assertThat(walk(netty, name)).as(at + " walk " + name).isEqualTo(netty.getAll(name));
            for (String v : new String[] {"close", "CLOSE", "upgrade", "x", "y", "z", "42", "a"}) {
                for (boolean ignoreCase : new boolean[] {true, false}) {
                    assertThat(ours.contains(name, v, ignoreCase)).as(at + " contains " + name + "=" + v)
                            .isEqualTo(netty.contains(name, v, ignoreCase));
                    assertThat(ours.containsValue(name, v, ignoreCase)).as(at + " containsValue " + name + "=" + v)
                            .isEqualTo(netty.containsValue(name, v, ignoreCase));
                }
            }
        }
    }

    private static List<String> walk(HttpHeaders h, CharSequence name) {
        List<String> values = new ArrayList<>();
        for (int i = ArrayHttpHeaders.nextValue(h, name, 0); i >= 0; i = ArrayHttpHeaders.nextValue(h, name, i + 1)) {
            values.add(ArrayHttpHeaders.valueAt(h, name, i).toString());
        }
        return values;
    }

    private static java.util.Set<String> lowerCase(java.util.Set<String> names) {
        java.util.Set<String> out = new java.util.TreeSet<>();
        names.forEach(n -> out.add(n.toLowerCase(java.util.Locale.ROOT)));
        return out;
    }

    private static List<String> entries(HttpHeaders h) {
        List<String> out = new ArrayList<>();
        Iterator<Map.Entry<CharSequence, CharSequence>> it = h.iteratorCharSequence();
        while (it.hasNext()) {
            Map.Entry<CharSequence, CharSequence> e = it.next();
            out.add(e.getKey() + ": " + e.getValue());
        }
        return out;
    }

    @Test
    void validating_refusesWhatNettysDefaultFactoryRefuses() {
        String[][] cases = {
            {"x-ok", "fine"}, {"bad name", "v"}, {"bad:name", "v"}, {"", "v"}, {"x-nul", "a\u0000b"},
            {"x-lf", "a\nb"}, {"x-cr", "a\rb"}, {"x-tab", "a\tb"}, {"x-utf", "caf\u00e9"}, {"\u00e9", "v"}};
        for (String[] c : cases) {
            boolean nettyRefuses = refuses(DefaultHttpHeadersFactory.headersFactory().newHeaders(), c[0], c[1]);
            boolean oursRefuses = refuses(ArrayHttpHeaders.VALIDATING.newHeaders(), c[0], c[1]);
            assertThat(oursRefuses).as("%s: %s", c[0], c[1]).isEqualTo(nettyRefuses);
            assertThat(refuses(ArrayHttpHeaders.TRUSTED.newHeaders(), c[0], c[1])).isFalse();
        }
        for (String framing : new String[] {"Content-Length", "transfer-encoding", "Trailer", "x-checksum"}) {
            assertThat(refuses(ArrayHttpHeaders.VALIDATING_TRAILERS.newHeaders(), framing, "1"))
                    .isEqualTo(refuses(DefaultHttpHeadersFactory.trailersFactory().newHeaders(), framing, "1"));
        }
    }

    private static boolean refuses(HttpHeaders h, String name, String value) {
        try {
            h.add(name, value);
            return false;
        } catch (IllegalArgumentException e) {
            return true;
        }
    }

    /** Netty's request decoder with either factory: the same requests decoded alike, the same ones refused. */
    @Test
    void serverDecoder_withEitherFactory_decodesAndRefusesAlike() {
        String[] heads = {
            "POST /v1/x HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
                    + "X-Dup: 1\r\nx-dup: 2\r\n\r\n{}",
            "POST /v1/x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nX-T: 1\r\n\r\n",
            "POST /v1/x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nContent-Length: 9\r\n\r\n",
            "POST /v1/x HTTP/1.1\r\nHost: a\r\nBad Name: 1\r\nContent-Length: 0\r\n\r\n",
            "POST /v1/x HTTP/1.1\r\nHost: a\r\nX-Ctl: a\u0001b\r\nContent-Length: 0\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"};
        for (String head : heads) {
            String netty = decode(head, DefaultHttpHeadersFactory.headersFactory(),
                    DefaultHttpHeadersFactory.trailersFactory());
            String ours = decode(head, ArrayHttpHeaders.VALIDATING, ArrayHttpHeaders.VALIDATING_TRAILERS);
            assertThat(ours).as(head).isEqualTo(netty);
        }
    }

    private static String decode(String wire, io.netty.handler.codec.http.HttpHeadersFactory headers,
            io.netty.handler.codec.http.HttpHeadersFactory trailers) {
        EmbeddedChannel ch = new EmbeddedChannel(new HttpServerCodec(new HttpDecoderConfig()
                .setHeadersFactory(headers).setTrailersFactory(trailers)), new HttpObjectAggregator(1024));
        ch.writeInbound(Unpooled.copiedBuffer(wire, StandardCharsets.ISO_8859_1));
        FullHttpRequest r = ch.readInbound();
        String out;
        if (r == null) {
            out = "nothing";
        } else {
            try {
                ByteBuf body = r.content();
                out = r.decoderResult().isSuccess() + " " + r.method() + " " + r.uri() + " " + entries(r.headers())
                        + " " + entries(r.trailingHeaders()) + " " + body.toString(StandardCharsets.UTF_8);
            } finally {
                r.release();
            }
        }
        ch.finishAndReleaseAll();
        return out;
    }

    @Test
    void names_nullAndEmpty_refusedOrNot_asNetty() {
        assertThatThrownBy(() -> ArrayHttpHeaders.TRUSTED.newHeaders().add((CharSequence) null, "v"))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> ArrayHttpHeaders.TRUSTED.newHeaders().add("x", (Object) null))
                .isInstanceOf(NullPointerException.class);
    }
}
