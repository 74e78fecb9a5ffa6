package io.modelgateway.core.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.modelgateway.core.config.ConfigLoader;
import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.upstream.UpstreamPools;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Arbitrary bytes into the whole server pipeline (the in-process simulator answers, so no socket is needed):
 * no exception escapes, nothing leaks, and whatever comes out is a sequence of well-formed HTTP/1.1 responses
 * — or nothing, or a close. Regression mode (CI) replays the seeds in src/test/resources; {@code JAZZER_FUZZ=1}
 * fuzzes.
 */
class ServerPipelineFuzzTest {
    private static final Pattern STATUS_LINE = Pattern.compile("HTTP/1\\.1 [1-5]\\d\\d [^\r\n]*\r\n");
    private static UpstreamPools pools;
    private static GatewayChannelInitializer initializer;

    @BeforeAll
    static void setUp() throws Exception {
        GatewayConfig config = ConfigLoader.parse("""
                access_log: off
                server: {request_timeout_ms: 1000}
                keys:
                  - name: fuzz
                    key: ${K}
                    models: ["*"]
                    limits: {requests_per_minute: 100000}
                providers:
                  sim: {type: simulator, forward_headers: ["x-sim-*"]}
                models:
                  sim-chat: {deployments: [{provider: sim, model: sim-chat-1}]}
                  sim-embed: {type: embedding, supports_dimensions: true, deployments: [{provider: sim}]}
                """, "fuzz.yaml", Map.of("K", "sk-fuzz"), "127.0.0.1:0");
        pools = new UpstreamPools();
        initializer = new GatewayChannelInitializer(new GatewayContext(config, pools));
    }

    @AfterAll
    static void tearDown() {
        pools.close();
    }

    @FuzzTest(maxDuration = "60s")
    void pipeline_anyBytes_answersWellFormedOrCloses(byte[] data) {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.freezeTime();
        initializer.init(ch);
        int cut = data.length == 0 ? 0 : (data[0] & 0xff) % data.length;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            feed(ch, data, 0, cut);
            feed(ch, data, cut, data.length);
            for (int i = 0; i < 50 && ch.isOpen(); i++) { // paced answers, timers, the next pipelined request
                ch.advanceTimeBy(100, TimeUnit.MILLISECONDS);
                ch.runPendingTasks();
                ch.runScheduledPendingTasks();
                drain(ch, out);
            }
            ch.advanceTimeBy(5, TimeUnit.SECONDS); // the request timeout, the linger of a closing connection
            ch.runScheduledPendingTasks();
            drain(ch, out);
            ch.checkException();
        } finally {
            ch.finishAndReleaseAll();
        }
        String written = out.toString(StandardCharsets.ISO_8859_1);
        if (!written.isEmpty()) {
            assertThat(STATUS_LINE.matcher(written).lookingAt()).as("starts with a status line: %s",
                    written.substring(0, Math.min(80, written.length()))).isTrue();
            assertThat(written).contains("\r\n\r\n");
        }
    }

    private static void feed(EmbeddedChannel ch, byte[] data, int from, int to) {
        if (to > from && ch.isOpen()) {
            ch.writeInbound(Unpooled.copiedBuffer(data, from, to - from));
            ch.runPendingTasks();
        }
    }

    private static void drain(EmbeddedChannel ch, ByteArrayOutputStream out) {
        Object o;
        while ((o = ch.readOutbound()) != null) {
            if (o instanceof ByteBuf b) {
                byte[] bytes = new byte[b.readableBytes()];
                b.getBytes(b.readerIndex(), bytes);
                out.writeBytes(bytes);
            }
            ReferenceCountUtil.release(o);
        }
        Object in;
        while ((in = ch.readInbound()) != null) {
            ReferenceCountUtil.release(in);
        }
    }
}
