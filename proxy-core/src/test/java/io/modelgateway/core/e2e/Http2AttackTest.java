package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.testing.Cli;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.TestGateway;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http2.DefaultHttp2FrameWriter;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersEncoder;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Flags;
import io.netty.handler.codec.http2.Http2FrameTypes;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2Settings;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The known HTTP/2 attack patterns against an h2c listener, each sent with Netty's own HTTP/2 client-side frame
 * writer and HPACK encoder on a raw socket (so nothing on the client side softens them): the gateway ends that
 * connection with GOAWAY and keeps serving everyone else (a curl request right after gets its answer). Also: a
 * client's RST_STREAM cancels that stream's exchange at once.
 */
class Http2AttackTest {
    static final RecordingObserver records = new RecordingObserver();
    static TestGateway gw;

    @BeforeAll
    static void start() throws Exception {
        gw = TestGateway.start("http2: {cleartext: true}\n" + TestGateway.simulatorConfig(
                "  slow: {type: simulator, simulator: {tokens_per_second: 5, output_tokens: 1000}}\n",
                "  slow-chat: {deployments: [{provider: slow, model: slow-1}]}\n"), records);
    }

    @AfterAll
    static void stop() {
        gw.close();
    }

    /** Frames as Netty's client writes them, turned into bytes for the socket. */
    static final class Frames {
        final EmbeddedChannel ch = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
        final ChannelHandlerContext ctx = ch.pipeline().firstContext();
        final DefaultHttp2FrameWriter writer = new DefaultHttp2FrameWriter();

        byte[] bytes(Consumer<Frames> write) {
            write.accept(this);
            ch.flushOutbound();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (ByteBuf b = ch.readOutbound(); b != null; b = ch.readOutbound()) {
                try {
                    byte[] a = new byte[b.readableBytes()];
                    b.readBytes(a);
                    out.writeBytes(a);
                } finally {
                    b.release();
                }
            }
            return out.toByteArray();
        }

        void close() {
            ch.finishAndReleaseAll();
        }
    }

    static Http2Headers request(String path) {
        return new DefaultHttp2Headers().method("POST").scheme("http").path(path).authority("127.0.0.1")
                .add("authorization", "Bearer " + TestGateway.KEY).add("content-type", "application/json");
    }

    /** One frame the gateway sent: type, flags, stream, and for GOAWAY its error code. */
    record Frame(int type, int flags, int stream, long goAwayError) {
    }

    /** Opens an h2c connection (preface and empty SETTINGS), sends {@code attack}, and reads until EOF. */
    static List<Frame> attack(byte[] attack) throws IOException {
        List<Frame> got = new ArrayList<>();
        try (Socket s = new Socket("127.0.0.1", gw.port())) {
            s.setSoTimeout(10_000);
            Frames f = new Frames();
            byte[] start = f.bytes(x -> x.writer.writeSettings(x.ctx, new Http2Settings(), x.ctx.newPromise()));
            f.close();
            OutputStream out = s.getOutputStream();
            out.write(Http2CodecUtil.connectionPrefaceBuf().toString(StandardCharsets.US_ASCII)
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(start);
            try {
                out.write(attack);
                out.flush();
            } catch (IOException e) {
                // closed by the gateway mid-attack: what it sent before is still read below
            }
            DataInputStream in = new DataInputStream(s.getInputStream());
            try {
                while (true) {
                    int length = in.readUnsignedShort() << 8 | in.readUnsignedByte();
                    int type = in.readUnsignedByte();
                    int flags = in.readUnsignedByte();
                    int stream = in.readInt() & 0x7fffffff;
                    byte[] payload = in.readNBytes(length);
                    long error = type == Http2FrameTypes.GO_AWAY && length >= 8
                            ? ((payload[4] & 0xffL) << 24 | (payload[5] & 0xff) << 16 | (payload[6] & 0xff) << 8
                            | (payload[7] & 0xff)) : -1;
                    got.add(new Frame(type, flags, stream, error));
                }
            } catch (EOFException | java.net.SocketException e) {
                return got; // the gateway closed the connection
            } catch (SocketTimeoutException e) {
                throw new AssertionError("the connection stayed open after the attack; frames: " + got);
            }
        }
    }

    static void othersStillServed() throws Exception {
        Cli.Result r = Cli.run(List.of("curl", "-sS", "--max-time", "20", "--http2-prior-knowledge", "-w",
                "\n%{http_version} %{http_code}", "-H", "authorization: Bearer " + TestGateway.KEY, "-H",
                "content-type: application/json", "--data-binary",
                "{\"model\":\"sim-chat\",\"max_tokens\":3,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
                gw.url("/api/v1/chat/completions")), null, 30);
        assertThat(r.out()).as(r.toString()).endsWith("\n2 200");
    }

    static void assertGoAway(List<Frame> frames, Http2Error error) {
        assertThat(frames).as("frames the gateway sent").anySatisfy(f -> {
            assertThat(f.type()).isEqualTo(Http2FrameTypes.GO_AWAY);
            assertThat(f.goAwayError()).isEqualTo(error.code());
        });
    }

    @Test
    void rapidReset_cve202344487_closesTheConnection_othersServed() throws Exception {
        Frames f = new Frames();
        byte[] attack = f.bytes(x -> {
            for (int i = 0; i < 1000; i++) {
                int stream = 1 + 2 * i;
                x.writer.writeHeaders(x.ctx, stream, request("/api/v1/chat/completions"), 0, false, x.ctx.newPromise());
                x.writer.writeRstStream(x.ctx, stream, Http2Error.CANCEL.code(), x.ctx.newPromise());
            }
        });
        f.close();
        List<Frame> frames = attack(attack);
        assertGoAway(frames, Http2Error.ENHANCE_YOUR_CALM);
        othersStillServed();
    }

    @Test
    void continuationFlood_closesTheConnection_othersServed() throws Exception {
        ByteBuf block = Unpooled.buffer();
        byte[] attack;
        try {
            new DefaultHttp2HeadersEncoder().encodeHeaders(1, request("/api/v1/chat/completions")
                    .add("x-filler", "a".repeat(2000)), block);
            // HEADERS with the block's first byte and no END_HEADERS, then the rest one byte per CONTINUATION.
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            frame(out, Http2FrameTypes.HEADERS, 0, 1, new byte[] {block.readByte()});
            while (block.isReadable()) {
                frame(out, Http2FrameTypes.CONTINUATION, 0, 1, new byte[] {block.readByte()});
            }
            attack = out.toByteArray();
        } finally {
            block.release();
        }
        List<Frame> frames = attack(attack);
        assertThat(frames).noneMatch(fr -> fr.type() == Http2FrameTypes.HEADERS);
        assertGoAway(frames, Http2Error.ENHANCE_YOUR_CALM);
        othersStillServed();
    }

    private static void frame(ByteArrayOutputStream out, byte type, int flags, int stream, byte[] payload) {
        out.write(payload.length >>> 16);
        out.write(payload.length >>> 8);
        out.write(payload.length);
        out.write(type);
        out.write(flags);
        out.write(stream >>> 24);
        out.write(stream >>> 16);
        out.write(stream >>> 8);
        out.write(stream);
        out.writeBytes(payload);
    }

    @Test
    void pingFlood_closesTheConnection_othersServed() throws Exception {
        Frames f = new Frames();
        byte[] attack = f.bytes(x -> {
            for (int i = 0; i < 2000; i++) {
                x.writer.writePing(x.ctx, false, i, x.ctx.newPromise());
            }
        });
        f.close();
        assertGoAway(attack(attack), Http2Error.ENHANCE_YOUR_CALM);
        othersStillServed();
    }

    @Test
    void settingsFlood_closesTheConnection_othersServed() throws Exception {
        Frames f = new Frames();
        byte[] attack = f.bytes(x -> {
            for (int i = 0; i < 2000; i++) {
                x.writer.writeSettings(x.ctx, new Http2Settings().initialWindowSize(65535 + i % 2),
                        x.ctx.newPromise());
            }
        });
        f.close();
        assertGoAway(attack(attack), Http2Error.ENHANCE_YOUR_CALM);
        othersStillServed();
    }

    @Test
    void rstStreamFromTheClient_cancelsThatExchangeAtOnce() throws Exception {
        records.clear();
        try (Socket s = new Socket("127.0.0.1", gw.port())) {
            s.setSoTimeout(10_000);
            Frames f = new Frames();
            byte[] body = "{\"model\":\"slow-chat\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"
                    .getBytes(StandardCharsets.US_ASCII);
            byte[] open = f.bytes(x -> {
                x.writer.writeSettings(x.ctx, new Http2Settings(), x.ctx.newPromise());
                x.writer.writeHeaders(x.ctx, 1, request("/api/v1/chat/completions"), 0, false, x.ctx.newPromise());
                x.writer.writeData(x.ctx, 1, Unpooled.wrappedBuffer(body), 0, true, x.ctx.newPromise());
            });
            OutputStream out = s.getOutputStream();
            out.write(Http2CodecUtil.connectionPrefaceBuf().toString(StandardCharsets.US_ASCII)
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(open);
            out.flush();
            // Wait for the answer's head and first event, so the exchange is under way.
            DataInputStream in = new DataInputStream(s.getInputStream());
            boolean data = false;
            while (!data) {
                int length = in.readUnsignedShort() << 8 | in.readUnsignedByte();
                int type = in.readUnsignedByte();
                in.readUnsignedByte();
                in.readInt();
                in.readNBytes(length);
                data = type == Http2FrameTypes.DATA;
            }
            out.write(f.bytes(x -> x.writer.writeRstStream(x.ctx, 1, Http2Error.CANCEL.code(), x.ctx.newPromise())));
            out.flush();
            f.close();
            // 1000 tokens at 5 per second would take minutes: the record says the client went away.
            ExchangeRecord r = records.next();
            assertThat(r.outcome()).isEqualTo(Outcome.CANCELLED);
        }
        othersStillServed();
    }
}
