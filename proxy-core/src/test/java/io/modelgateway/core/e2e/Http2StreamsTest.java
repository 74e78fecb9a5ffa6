package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.e2e.Http2AttackTest.Frames;
import io.modelgateway.core.testing.TestGateway;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameTypes;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2Settings;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * HTTP/2 streams on one connection, driven frame by frame with Netty's client-side frame writer and HPACK codec:
 * the stream cap, the header list cap (431), per-stream flow control (a stream the client gives no window waits
 * alone while another stream on the same connection is answered), the flushes of streams answered in the same turn
 * of the event loop shared, answer headers that change every time sent as never-indexed HPACK literals (the block
 * walked by RFC 7541's representation bits), and GOAWAY on drain.
 */
class Http2StreamsTest {
    static final String CHAT = "{\"model\":\"sim-chat\",\"max_tokens\":50,\"stream\":true,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}";

    /** A raw h2c connection: frames out through Netty's writer, frames in decoded here. */
    static final class Conn implements AutoCloseable {
        final Socket s;
        final OutputStream out;
        final DataInputStream in;
        final Frames frames = new Frames();
        final DefaultHttp2HeadersDecoder hpack = new DefaultHttp2HeadersDecoder(true);
        final Map<Integer, Http2Headers> heads = new HashMap<>();
        /** Each stream's header block as sent (HPACK), beside its decoded headers. */
        final Map<Integer, byte[]> blocks = new HashMap<>();
        final Map<Integer, ByteArrayOutputStream> bodies = new HashMap<>();
        final Map<Integer, Boolean> ended = new HashMap<>();
        final Map<Integer, Long> resets = new HashMap<>();
        long goAway = -1;

        Conn(int port, Http2Settings settings) throws IOException {
            s = new Socket("127.0.0.1", port);
            s.setSoTimeout(10_000);
            out = s.getOutputStream();
            in = new DataInputStream(s.getInputStream());
            out.write(Http2CodecUtil.connectionPrefaceBuf().toString(StandardCharsets.US_ASCII)
                    .getBytes(StandardCharsets.US_ASCII));
            send(x -> x.writer.writeSettings(x.ctx, settings, x.ctx.newPromise()));
        }

        void send(Consumer<Frames> write) throws IOException {
            out.write(frames.bytes(write));
            out.flush();
        }

        void post(int stream, String body) throws IOException {
            send(x -> {
                x.writer.writeHeaders(x.ctx, stream, Http2AttackTest.request("/api/v1/chat/completions"), 0, false,
                        x.ctx.newPromise());
                x.writer.writeData(x.ctx, stream, Unpooled.wrappedBuffer(body.getBytes(StandardCharsets.UTF_8)), 0,
                        true, x.ctx.newPromise());
            });
        }

        /** Reads one frame and records it; false at the end of the connection. */
        boolean read() throws Exception {
            int length;
            try {
                length = in.readUnsignedShort() << 8 | in.readUnsignedByte();
            } catch (java.io.EOFException | java.net.SocketException e) {
                return false;
            }
            int type = in.readUnsignedByte();
            int flags = in.readUnsignedByte();
            int stream = in.readInt() & 0x7fffffff;
            byte[] payload = in.readNBytes(length);
            boolean endStream = (flags & 0x1) != 0;
            if (type == Http2FrameTypes.HEADERS) {
                var buf = Unpooled.wrappedBuffer(payload);
                blocks.put(stream, payload);
                heads.put(stream, hpack.decodeHeaders(stream, buf)); // the gateway sends no padding or priority
                ended.put(stream, endStream || ended.getOrDefault(stream, false));
            } else if (type == Http2FrameTypes.DATA) {
                bodies.computeIfAbsent(stream, k -> new ByteArrayOutputStream()).writeBytes(payload);
                ended.put(stream, endStream);
            } else if (type == Http2FrameTypes.RST_STREAM) {
                resets.put(stream, (payload[0] & 0xffL) << 24 | (payload[1] & 0xff) << 16 | (payload[2] & 0xff) << 8
                        | (payload[3] & 0xff));
            } else if (type == Http2FrameTypes.GO_AWAY) {
                goAway = (payload[4] & 0xffL) << 24 | (payload[5] & 0xff) << 16 | (payload[6] & 0xff) << 8
                        | (payload[7] & 0xff);
            }
            return true;
        }

        boolean done(int stream) {
            return ended.getOrDefault(stream, false) || resets.containsKey(stream);
        }

        String body(int stream) {
            ByteArrayOutputStream b = bodies.get(stream);
            return b == null ? "" : b.toString(StandardCharsets.UTF_8);
        }

        @Override
        public void close() throws IOException {
            frames.close();
            s.close();
        }
    }

    @Test
    void oneStreamMoreThanMaxConcurrentStreams_isRefused_theOthersAnswered() throws Exception {
        try (TestGateway gw = TestGateway.start("http2: {cleartext: true, max_concurrent_streams: 2}\n"
                + TestGateway.simulatorConfig());
             Conn c = new Conn(gw.port(), new Http2Settings())) {
            // Three requests whose bodies have not ended: all three streams stay open at once.
            c.send(x -> {
                for (int stream : new int[] {1, 3, 5}) {
                    x.writer.writeHeaders(x.ctx, stream, Http2AttackTest.request("/api/v1/chat/completions"), 0,
                            false, x.ctx.newPromise());
                }
            });
            while (!c.resets.containsKey(5)) {
                assertThat(c.read()).isTrue();
            }
            assertThat(c.resets.get(5)).isEqualTo(Http2Error.REFUSED_STREAM.code());
            c.send(x -> {
                for (int stream : new int[] {1, 3}) {
                    x.writer.writeData(x.ctx, stream, Unpooled.wrappedBuffer(CHAT.getBytes(StandardCharsets.UTF_8)),
                            0, true, x.ctx.newPromise());
                }
            });
            while (!(c.done(1) && c.done(3))) {
                assertThat(c.read()).isTrue();
            }
            assertThat(c.heads.get(1).status().toString()).isEqualTo("200");
            assertThat(c.body(1)).endsWith("data: [DONE]\n\n");
            assertThat(c.body(3)).endsWith("data: [DONE]\n\n");
        }
    }

    @Test
    void headersPastMaxHeaderListSize_get431_andTheConnectionServesOn() throws Exception {
        try (TestGateway gw = TestGateway.start("http2: {cleartext: true, max_header_list_size: 4096}\n"
                + TestGateway.simulatorConfig());
             Conn c = new Conn(gw.port(), new Http2Settings())) {
            c.send(x -> x.writer.writeHeaders(x.ctx, 1, Http2AttackTest.request("/api/v1/chat/completions")
                    .add("x-big", "b".repeat(4500)), 0, true, x.ctx.newPromise()));
            while (!c.done(1)) {
                assertThat(c.read()).isTrue();
            }
            assertThat(c.heads.get(1).status().toString()).isEqualTo("431");
            c.post(3, CHAT);
            while (!c.done(3)) {
                assertThat(c.read()).isTrue();
            }
            assertThat(c.heads.get(3).status().toString()).isEqualTo("200");
        }
    }

    @Test
    void aStreamWithoutWindow_waitsAlone_anotherStreamIsAnswered_thenItFinishesWhole() throws Exception {
        try (TestGateway gw = TestGateway.start("http2: {cleartext: true}\n" + TestGateway.simulatorConfig());
             Conn c = new Conn(gw.port(), new Http2Settings().initialWindowSize(0))) {
            c.post(1, CHAT);
            c.post(3, CHAT);
            // Both heads come (HEADERS are not flow-controlled); no DATA can come on either stream yet.
            while (!(c.heads.containsKey(1) && c.heads.containsKey(3))) {
                assertThat(c.read()).isTrue();
            }
            // Only stream 3 gets a window: it is answered whole while stream 1 still waits.
            c.send(x -> x.writer.writeWindowUpdate(x.ctx, 3, 1 << 20, x.ctx.newPromise()));
            while (!c.done(3)) {
                assertThat(c.read()).isTrue();
            }
            assertThat(c.body(3)).startsWith("data: {").endsWith("data: [DONE]\n\n");
            assertThat(c.body(1)).isEmpty();
            assertThat(c.done(1)).isFalse();
            c.send(x -> x.writer.writeWindowUpdate(x.ctx, 1, 1 << 20, x.ctx.newPromise()));
            while (!c.done(1)) {
                assertThat(c.read()).isTrue();
            }
            assertThat(c.body(1)).startsWith("data: {").endsWith("data: [DONE]\n\n");
        }
    }

    @Test
    void eventsOfStreamsDueInOneTurn_leaveInOneFlush() throws Exception {
        try (TestGateway gw = TestGateway.start("http2: {cleartext: true}\n" + TestGateway.simulatorConfig(
                "  slow: {type: simulator, simulator: {ttft_ms: 50, tokens_per_second: 50, output_tokens: 20}}\n",
                "  slow-chat: {deployments: [{provider: slow, model: slow-1}]}\n"));
             Conn c = new Conn(gw.port(), new Http2Settings())) {
            // The connection's first stream, answered whole, so its server channel is known.
            c.post(1, CHAT.replace("\"stream\":true", "\"stream\":false"));
            while (!c.done(1)) {
                assertThat(c.read()).isTrue();
            }
            assertThat(gw.server().context().connections().size()).isEqualTo(1);
            Channel connection = gw.server().context().connections().iterator().next();
            // At the head of its pipeline: the bytes written since the last flush, and at each flush how many
            // streams' HEADERS and DATA frames it carried.
            List<Integer> streamsPerFlush = new CopyOnWriteArrayList<>();
            Set<Integer> streamsSeen = ConcurrentHashMap.newKeySet();
            connection.pipeline().addFirst(new ChannelOutboundHandlerAdapter() {
                final ByteArrayOutputStream pending = new ByteArrayOutputStream();

                @Override
                public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                    if (msg instanceof ByteBuf b) {
                        pending.writeBytes(ByteBufUtil.getBytes(b));
                    }
                    ctx.write(msg, promise);
                }

                @Override
                public void flush(ChannelHandlerContext ctx) {
                    byte[] bytes = pending.toByteArray();
                    pending.reset();
                    Set<Integer> streams = new HashSet<>();
                    for (int at = 0; at + 9 <= bytes.length; ) {
                        int length = (bytes[at] & 0xff) << 16 | (bytes[at + 1] & 0xff) << 8 | bytes[at + 2] & 0xff;
                        int type = bytes[at + 3];
                        int stream = ((bytes[at + 5] & 0x7f) << 24 | (bytes[at + 6] & 0xff) << 16
                                | (bytes[at + 7] & 0xff) << 8 | bytes[at + 8] & 0xff);
                        if (type == Http2FrameTypes.DATA || type == Http2FrameTypes.HEADERS) {
                            streams.add(stream);
                        }
                        at += 9 + length;
                    }
                    if (!streams.isEmpty()) {
                        streamsPerFlush.add(streams.size());
                        streamsSeen.addAll(streams);
                    }
                    ctx.flush();
                }
            });
            // Sixteen paced streams, their heads and events written by the simulator's timers, outside any read of
            // the connection: streams whose events fall due in the same millisecond are handed them in one turn of
            // the event loop, and their frames of that turn leave in one flush.
            int[] streams = IntStream.rangeClosed(1, 16).map(i -> 2 * i + 1).toArray();
            c.send(x -> {
                x.writer.writeWindowUpdate(x.ctx, 0, 1 << 24, x.ctx.newPromise()); // room for all sixteen answers
                for (int stream : streams) {
                    x.writer.writeHeaders(x.ctx, stream, Http2AttackTest.request("/api/v1/chat/completions"), 0, false,
                            x.ctx.newPromise());
                    x.writer.writeData(x.ctx, stream, Unpooled.wrappedBuffer(
                            CHAT.replace("sim-chat", "slow-chat").getBytes(StandardCharsets.UTF_8)), 0, true,
                            x.ctx.newPromise());
                }
            });
            while (!Arrays.stream(streams).allMatch(c::done)) {
                assertThat(c.read()).isTrue();
            }
            for (int stream : streams) {
                assertThat(c.heads.get(stream).status().toString()).isEqualTo("200");
                assertThat(c.body(stream)).startsWith("data: {").endsWith("data: [DONE]\n\n");
            }
            // Flushed by each stream on its own, every flush would carry one stream's frames.
            assertThat(streamsPerFlush).as("streams per flush").anyMatch(n -> n > 1);
            // Every stream's frames went through the flushes watched. (Not a count of flushes per stream: under load
            // two events of one stream may fall due in one turn and leave in one flush, which is the point.)
            assertThat(streamsSeen).as("streams whose frames were flushed").containsAll(
                    Arrays.stream(streams).boxed().toList());
        }
    }

    /** HPACK representations (RFC 7541, section 6) of a header block: how many of each kind. */
    static Map<String, Integer> representations(byte[] block) {
        Map<String, Integer> kinds = new HashMap<>();
        int at = 0;
        while (at < block.length) {
            int b = block[at] & 0xff;
            String kind;
            if ((b & 0x80) != 0) {
                kind = "indexed";
                at = skipInteger(block, at, 7);
            } else if ((b & 0x20) != 0 && (b & 0x40) == 0) {
                kind = "table size update";
                at = skipInteger(block, at, 5);
            } else {
                int prefix = (b & 0x40) != 0 ? 6 : 4;
                kind = (b & 0x40) != 0 ? "incremental indexing" : (b & 0x10) != 0 ? "never indexed" : "without indexing";
                boolean newName = (b & ((1 << prefix) - 1)) == 0;
                at = skipInteger(block, at, prefix);
                if (newName) {
                    at = skipString(block, at);
                }
                at = skipString(block, at);
            }
            kinds.merge(kind, 1, Integer::sum);
        }
        return kinds;
    }

    private static int skipInteger(byte[] block, int at, int prefixBits) {
        int mask = (1 << prefixBits) - 1;
        if ((block[at++] & mask) != mask) {
            return at;
        }
        while ((block[at++] & 0x80) != 0) {
            // continuation bytes
        }
        return at;
    }

    private static int skipString(byte[] block, int at) {
        int length = block[at] & 0x7f;
        if (length == 0x7f) {
            int shift = 0;
            length = 0x7f;
            int b;
            at++;
            do {
                b = block[at++] & 0xff;
                length += (b & 0x7f) << shift;
                shift += 7;
            } while ((b & 0x80) != 0);
            return at + length;
        }
        return at + 1 + length;
    }

    @Test
    void answerHeadersThatChangeEveryTime_areNeverIndexed_theOthersComeFromTheTable() throws Exception {
        try (TestGateway gw = TestGateway.start("http2: {cleartext: true}\n" + TestGateway.simulatorConfig());
             Conn c = new Conn(gw.port(), new Http2Settings())) {
            String plain = CHAT.replace("\"stream\":true", "\"stream\":false");
            c.post(1, plain);
            while (!c.done(1)) {
                assertThat(c.read()).isTrue();
            }
            c.post(3, plain);
            while (!c.done(3)) {
                assertThat(c.read()).isTrue();
            }
            // Names whose values differ from one answer to the next (RFC 7541 section 7.1.3: such values are worth
            // no table entry): as many never-indexed literals as the second answer carries of them.
            Set<String> changing = Set.of("x-request-id", "request-id", "content-length", "server-timing",
                    "x-ratelimit-remaining-requests", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-requests",
                    "x-ratelimit-reset-tokens");
            Http2Headers second = c.heads.get(3);
            assertThat(second.status().toString()).isEqualTo("200");
            assertThat(second.get("x-request-id")).isNotEqualTo(c.heads.get(1).get("x-request-id"));
            long changingSent = 0;
            for (Map.Entry<CharSequence, CharSequence> h : second) {
                changingSent += changing.contains(h.getKey().toString()) ? 1 : 0;
            }
            Map<String, Integer> kinds = representations(c.blocks.get(3));
            assertThat(changingSent).isGreaterThanOrEqualTo(2);
            assertThat(kinds.getOrDefault("never indexed", 0)).as("%s", kinds).isEqualTo((int) changingSent);
            // Everything else of the second answer repeats the first, so it is all in the table by now.
            assertThat(kinds.getOrDefault("incremental indexing", 0)).as("%s", kinds).isZero();
            assertThat(kinds.get("indexed")).as("%s", kinds).isEqualTo(second.size() - (int) changingSent);
        }
    }

    @Test
    void drain_sendsGoAwayNoError_theOpenStreamFinishes_thenTheConnectionCloses() throws Exception {
        TestGateway gw = TestGateway.start("http2: {cleartext: true}\n" + TestGateway.simulatorConfig(
                "  slow: {type: simulator, simulator: {tokens_per_second: 50, output_tokens: 20}}\n",
                "  slow-chat: {deployments: [{provider: slow, model: slow-1}]}\n"));
        boolean closing = false;
        try (Conn c = new Conn(gw.port(), new Http2Settings())) {
            c.post(1, CHAT.replace("sim-chat", "slow-chat"));
            while (!c.heads.containsKey(1)) {
                assertThat(c.read()).isTrue();
            }
            Thread closer = new Thread(() -> gw.server().close(10_000));
            closer.start();
            closing = true;
            while (c.read()) {
                // until the gateway closes the connection
            }
            closer.join(15_000);
            assertThat(c.goAway).isEqualTo(Http2Error.NO_ERROR.code());
            assertThat(c.heads.get(1).status().toString()).isEqualTo("200");
            assertThat(c.body(1)).as("the stream open at the drain").endsWith("data: [DONE]\n\n");
        } finally {
            if (!closing) {
                gw.close();
            }
        }
    }
}
