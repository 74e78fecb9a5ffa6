package io.modelgateway.core.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.PrematureChannelClosureException;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class RequestBodyAggregatorTest {
    @Test
    void bodyWithinLimit_isAggregated() {
        EmbeddedChannel ch = new EmbeddedChannel(new RequestBodyAggregator(1024));
        HttpRequest head = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/api/v1/chat/completions");
        head.headers().setInt("content-length", 4);
        ch.writeInbound(head, new DefaultHttpContent(Unpooled.copiedBuffer("{}", StandardCharsets.UTF_8)),
                new DefaultLastHttpContent(Unpooled.copiedBuffer("  ", StandardCharsets.UTF_8)));
        FullHttpRequest full = ch.readInbound();
        assertThat(full.content().toString(StandardCharsets.UTF_8)).isEqualTo("{}  ");
        full.release();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void declaredLengthOverLimit_is413InCallerStyleAndCloses() {
        EmbeddedChannel ch = new EmbeddedChannel(new RequestBodyAggregator(1024));
        HttpRequest head = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/api/v1/messages");
        head.headers().setInt("content-length", 5000);
        ch.writeInbound(head);
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(413);
        assertThat(r.content().toString(StandardCharsets.UTF_8)).contains("\"type\":\"request_too_large\"");
        r.release();
        ch.runPendingTasks();
        assertThat(ch.isOpen()).isFalse();
        ch.finishAndReleaseAll();
    }

    private static final int MAX = 4096;

    /**
     * Requests as a client sends them (bodies by length or chunked, in one piece or several, with trailers, empty),
     * cut into random reads, decoded by Netty's HTTP codec: made whole by this aggregator and by Netty's own, the
     * two lists must be the same request by request — head, body bytes, trailers.
     */
    @Test
    void randomRequests_madeWholeAsNettysAggregatorMakesThem() {
        Random rnd = new Random(20261129);
        int fastPath = 0;
        for (int round = 0; round < 400; round++) {
            byte[] wire = randomRequests(rnd);
            int[] cuts = randomCuts(rnd, wire.length);
            List<FullHttpRequest> ours = decode(wire, cuts, () -> new RequestBodyAggregator(MAX));
            List<FullHttpRequest> netty = decode(wire, cuts, () -> new HttpObjectAggregator(MAX, true));
            assertThat(ours).hasSameSizeAs(netty).isNotEmpty();
            for (int i = 0; i < ours.size(); i++) {
                FullHttpRequest a = ours.get(i);
                FullHttpRequest b = netty.get(i);
                String at = "round " + round + ", request " + i;
                assertThat(a.method()).as(at).isEqualTo(b.method());
                assertThat(a.uri()).as(at).isEqualTo(b.uri());
                assertThat(a.protocolVersion()).as(at).isEqualTo(b.protocolVersion());
                assertThat(entries(a.headers().entries())).as(at).isEqualTo(entries(b.headers().entries()));
                assertThat(entries(a.trailingHeaders().entries())).as(at)
                        .isEqualTo(entries(b.trailingHeaders().entries()));
                assertThat(a.decoderResult().isSuccess()).as(at).isEqualTo(b.decoderResult().isSuccess());
                assertThat(bytes(a.content())).as(at).isEqualTo(bytes(b.content()));
                if (!(a.content() instanceof CompositeByteBuf)) {
                    fastPath++;
                }
                a.release();
                b.release();
            }
        }
        assertThat(fastPath).as("requests made whole without a composite buffer").isGreaterThan(100);
    }

    @Test
    void requestWholeInOneRead_keepsTheCodecsBuffer_noComposite() {
        byte[] wire = ("POST /api/v1/chat/completions HTTP/1.1\r\nhost: a\r\ncontent-length: 2\r\n\r\n{}")
                .getBytes(StandardCharsets.US_ASCII);
        List<FullHttpRequest> ours = decode(wire, new int[0], () -> new RequestBodyAggregator(MAX));
        List<FullHttpRequest> netty = decode(wire, new int[0], () -> new HttpObjectAggregator(MAX, true));
        assertThat(ours.get(0).content()).isNotInstanceOf(CompositeByteBuf.class);
        assertThat(netty.get(0).content()).isInstanceOf(CompositeByteBuf.class);
        assertThat(ours.get(0).content().toString(StandardCharsets.UTF_8)).isEqualTo("{}");
        ours.get(0).release();
        netty.get(0).release();
    }

    @Test
    void contentLengthThatDoesNotParse_goesTheAggregatorsWay_likeNettys() {
        for (Supplier<ChannelHandler> aggregator : List.<Supplier<ChannelHandler>>of(
                () -> new RequestBodyAggregator(MAX), () -> new HttpObjectAggregator(MAX, true))) {
            EmbeddedChannel ch = new EmbeddedChannel(aggregator.get());
            HttpRequest head = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/api/v1/chat/completions");
            head.headers().set("content-length", "two");
            ch.writeInbound(head, new DefaultLastHttpContent(Unpooled.copiedBuffer("{}", StandardCharsets.UTF_8)));
            FullHttpRequest full = ch.readInbound();
            assertThat(full.content().toString(StandardCharsets.UTF_8)).isEqualTo("{}");
            assertThat(full.headers().get("content-length")).isEqualTo("two");
            full.release();
            assertThat(ch.finishAndReleaseAll()).isFalse();
        }
    }

    @Test
    void connectionClosedBetweenHeadAndBody_isReportedAsNettysAggregatorDoes() {
        for (Supplier<ChannelHandler> aggregator : List.<Supplier<ChannelHandler>>of(
                () -> new RequestBodyAggregator(MAX), () -> new HttpObjectAggregator(MAX, true))) {
            EmbeddedChannel ch = new EmbeddedChannel(new HttpServerCodec(), aggregator.get());
            ch.writeInbound(Unpooled.copiedBuffer("POST /api/v1/messages HTTP/1.1\r\nhost: a\r\ncontent-length: 10\r\n\r\n",
                    StandardCharsets.US_ASCII));
            assertThat((Object) ch.readInbound()).isNull();
            org.assertj.core.api.Assertions.assertThatThrownBy(ch::finishAndReleaseAll)
                    .isInstanceOf(PrematureChannelClosureException.class);
        }
    }

    private static List<FullHttpRequest> decode(byte[] wire, int[] cuts, Supplier<ChannelHandler> aggregator) {
        EmbeddedChannel ch = new EmbeddedChannel(new HttpServerCodec(), aggregator.get());
        int from = 0;
        for (int cut : cuts) {
            ch.writeInbound(Unpooled.copiedBuffer(wire, from, cut - from));
            from = cut;
        }
        ch.writeInbound(Unpooled.copiedBuffer(wire, from, wire.length - from));
        List<FullHttpRequest> out = new ArrayList<>();
        Object m;
        while ((m = ch.readInbound()) != null) {
            out.add((FullHttpRequest) m);
        }
        assertThat((Object) ch.readOutbound()).as("nothing answered").isNull();
        assertThat(ch.finishAndReleaseAll()).isFalse();
        return out;
    }

    private static byte[] randomRequests(Random rnd) {
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        int n = 1 + rnd.nextInt(4);
        for (int i = 0; i < n; i++) {
            boolean get = rnd.nextInt(6) == 0;
            byte[] body = new byte[get ? 0 : rnd.nextInt(5) == 0 ? 0 : rnd.nextInt(3000)];
            for (int j = 0; j < body.length; j++) {
                body[j] = (byte) (' ' + rnd.nextInt(95));
            }
            StringBuilder head = new StringBuilder(get ? "GET" : "POST").append(" /api/v1/")
                    .append(get ? "models" : "chat/completions").append(" HTTP/1.1\r\nhost: gw\r\n");
            for (int h = rnd.nextInt(4); h > 0; h--) {
                head.append("x-h").append(rnd.nextInt(3)).append(": v").append(rnd.nextInt(100)).append("\r\n");
            }
            boolean chunked = !get && rnd.nextBoolean();
            if (chunked) {
                head.append("transfer-encoding: chunked\r\n\r\n");
                wire.writeBytes(head.toString().getBytes(StandardCharsets.US_ASCII));
                int at = 0;
                while (at < body.length) {
                    int len = Math.min(body.length - at, 1 + rnd.nextInt(Math.max(1, body.length)));
                    wire.writeBytes((Integer.toHexString(len) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                    wire.write(body, at, len);
                    wire.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
                    at += len;
                }
                String trailers = rnd.nextBoolean() ? "x-trailer: t" + rnd.nextInt(10) + "\r\n" : "";
                wire.writeBytes(("0\r\n" + trailers + "\r\n").getBytes(StandardCharsets.US_ASCII));
            } else {
                if (!get || rnd.nextBoolean()) {
                    head.append("content-length: ").append(body.length).append("\r\n");
                }
                head.append("\r\n");
                wire.writeBytes(head.toString().getBytes(StandardCharsets.US_ASCII));
                wire.writeBytes(body);
            }
        }
        return wire.toByteArray();
    }

    /** Where the wire is cut into reads: none (one read), or up to eight random places. */
    private static int[] randomCuts(Random rnd, int length) {
        if (rnd.nextInt(3) == 0 || length < 2) {
            return new int[0];
        }
        return rnd.ints(1 + rnd.nextInt(8), 1, length).distinct().sorted().toArray();
    }

    private static List<String> entries(List<Map.Entry<String, String>> entries) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, String> e : entries) {
            out.add(e.getKey().toLowerCase() + ": " + e.getValue());
        }
        return out;
    }

    private static byte[] bytes(ByteBuf buf) {
        byte[] b = new byte[buf.readableBytes()];
        buf.getBytes(buf.readerIndex(), b);
        return b;
    }
}
