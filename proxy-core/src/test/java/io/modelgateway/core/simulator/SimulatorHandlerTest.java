package io.modelgateway.core.simulator;

import static io.modelgateway.core.simulator.SimTestSupport.chatRequest;
import static io.modelgateway.core.simulator.SimTestSupport.json;
import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.config.SimulatorSettings;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class SimulatorHandlerTest {

    private static EmbeddedChannel channel() {
        EmbeddedChannel ch = new EmbeddedChannel(new SimulatorHandler(
                new SimulatorEngine(SimulatorSettings.DEFAULT), null, null));
        ch.freezeTime();
        return ch;
    }

    private static FullHttpRequest post(String uri, String body, String... headers) {
        FullHttpRequest r = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, uri,
                Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
        for (int i = 0; i < headers.length; i += 2) {
            r.headers().add(headers[i], headers[i + 1]);
        }
        HttpUtil.setContentLength(r, r.content().readableBytes());
        return r;
    }

    /**
     * Reads and releases every outbound message; returns their kinds (FullHttpResponse, HttpResponse for a
     * stream head, HttpContent, LastHttpContent) and appends body bytes to {@code text}.
     */
    private static List<Class<?>> drain(EmbeddedChannel ch, StringBuilder text) {
        List<Class<?>> kinds = new ArrayList<>();
        Object o;
        while ((o = ch.readOutbound()) != null) {
            try {
                kinds.add(o instanceof FullHttpResponse ? FullHttpResponse.class
                        : o instanceof HttpResponse ? HttpResponse.class
                        : o instanceof LastHttpContent ? LastHttpContent.class
                        : HttpContent.class);
                if (o instanceof HttpContent c) {
                    text.append(c.content().toString(StandardCharsets.UTF_8));
                }
            } finally {
                ReferenceCountUtil.release(o);
            }
        }
        return kinds;
    }

    @Test
    void channelRead_nonStream_fullResponseAndRequestReleased() {
        EmbeddedChannel ch = channel();
        FullHttpRequest request = post("/v1/chat/completions", chatRequest(""));

        ch.writeInbound(request);

        assertThat(request.refCnt()).isZero();
        FullHttpResponse response = ch.readOutbound();
        try {
            assertThat(response.status().code()).isEqualTo(200);
            assertThat(response.headers().get(HttpHeaderNames.CONTENT_LENGTH))
                    .isEqualTo(Integer.toString(response.content().readableBytes()));
            assertThat(json(response.content().toString(StandardCharsets.UTF_8)).path("object").asText())
                    .isEqualTo("chat.completion");
        } finally {
            response.release();
        }
        assertThat(ch.isOpen()).isTrue();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void channelRead_pacedStream_eventsOnlyAfterTheirDelays() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(post("/v1/chat/completions", chatRequest(",\"stream\":true"),
                "x-sim-ttft-ms", "100", "x-sim-tps", "10", "x-sim-output-tokens", "3"));
        StringBuilder text = new StringBuilder();

        HttpResponse head = ch.readOutbound();
        assertThat(HttpUtil.isTransferEncodingChunked(head)).isTrue();
        assertThat(head.headers().get(HttpHeaderNames.CONTENT_TYPE)).isEqualTo("text/event-stream; charset=utf-8");

        ch.advanceTimeBy(99, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertThat(drain(ch, text)).isEmpty();

        // A gap ends on the pacing wheel's next millisecond: never early, at most a millisecond late.
        ch.advanceTimeBy(2, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertThat(drain(ch, text)).containsExactly(HttpContent.class); // role chunk

        // The words are due 100 ms apart on the timeline (200, 300, 400 ms after the head): the role chunk's
        // lateness does not shift them.
        for (int word = 0; word < 3; word++) {
            ch.advanceTimeBy(98, TimeUnit.MILLISECONDS);
            ch.runScheduledPendingTasks();
            assertThat(drain(ch, text)).as("word %d before its time", word).isEmpty();
            ch.advanceTimeBy(2, TimeUnit.MILLISECONDS);
            ch.runScheduledPendingTasks();
            List<Class<?>> out = drain(ch, text);
            if (word < 2) {
                assertThat(out).containsExactly(HttpContent.class);
            } else {
                // last word, then finishing chunk, [DONE] and the end of the body, all without delay
                assertThat(out).containsExactly(HttpContent.class, HttpContent.class, HttpContent.class,
                        LastHttpContent.class);
            }
        }
        assertThat(text.toString()).endsWith("data: [DONE]\n\n");
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    /**
     * A loop that runs late (here: nothing runs for 300 ms) does not stretch the stream: every event that fell due
     * meanwhile goes out at once, in order, and the stream ends when its timeline says.
     */
    @Test
    void channelRead_pacedStreamOnALateLoop_catchesUpWithItsTimeline() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(post("/v1/chat/completions", chatRequest(",\"stream\":true"),
                "x-sim-ttft-ms", "100", "x-sim-tps", "10", "x-sim-output-tokens", "3"));
        StringBuilder text = new StringBuilder();
        assertThat((Object) ch.readOutbound()).isInstanceOf(HttpResponse.class);

        ch.advanceTimeBy(99, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertThat(drain(ch, text)).isEmpty();

        ch.advanceTimeBy(302, TimeUnit.MILLISECONDS); // 401 ms: the role chunk and all three words are due
        ch.runScheduledPendingTasks();
        assertThat(drain(ch, text)).containsExactly(HttpContent.class, HttpContent.class, HttpContent.class,
                HttpContent.class, HttpContent.class, HttpContent.class, LastHttpContent.class);
        assertThat(text.toString()).startsWith("data: ").endsWith("data: [DONE]\n\n");
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void channelRead_cutAtEnd_closesWithoutLastContent() {
        EmbeddedChannel ch = channel();

        ch.writeInbound(post("/v1/chat/completions", chatRequest(",\"stream\":true"), "x-sim-fault", "cut_after=2"));
        ch.runPendingTasks();

        StringBuilder text = new StringBuilder();
        List<Class<?>> out = drain(ch, text);
        assertThat(out).containsExactly(HttpResponse.class, HttpContent.class, HttpContent.class, HttpContent.class);
        assertThat(ch.isOpen()).isFalse();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void channelRead_notWritable_waitsForWritability() {
        EmbeddedChannel ch = channel();
        ch.unsafe().outboundBuffer().setUserDefinedWritability(1, false);

        ch.writeInbound(post("/v1/messages", SimTestSupport.messagesRequest(",\"stream\":true")));
        StringBuilder text = new StringBuilder();
        assertThat(drain(ch, text)).containsExactly(HttpResponse.class);

        ch.unsafe().outboundBuffer().setUserDefinedWritability(1, true);
        ch.runPendingTasks();

        List<Class<?>> rest = drain(ch, text);
        assertThat(rest.get(rest.size() - 1)).isEqualTo(LastHttpContent.class);
        assertThat(text.toString()).startsWith("event: message_start").contains("event: message_stop");
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void channelRead_pipelinedRequest_waitsForTheRunningAnswer() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(post("/v1/chat/completions", chatRequest(",\"stream\":true"),
                "x-sim-tps", "10", "x-sim-output-tokens", "2"));
        ch.writeInbound(post("/v1/embeddings", "{\"model\":\"e\",\"input\":\"x\",\"dimensions\":4}"));
        StringBuilder text = new StringBuilder();
        assertThat(ch.config().isAutoRead()).isFalse();
        assertThat(drain(ch, text)).containsExactly(HttpResponse.class, HttpContent.class);

        ch.advanceTimeBy(1, TimeUnit.SECONDS);
        ch.runScheduledPendingTasks();
        ch.advanceTimeBy(1, TimeUnit.SECONDS);
        ch.runScheduledPendingTasks();

        List<Class<?>> out = drain(ch, text);
        assertThat(out.subList(out.size() - 2, out.size())).containsExactly(LastHttpContent.class, FullHttpResponse.class);
        assertThat(text.toString()).contains("data: [DONE]\n\n{\"object\":\"list\"");
        assertThat(ch.config().isAutoRead()).isTrue();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void channelInactive_queuedRequestsReleasedAndTimerDropped() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(post("/v1/chat/completions", chatRequest(",\"stream\":true"), "x-sim-ttft-ms", "1000"));
        FullHttpRequest queued = post("/v1/chat/completions", chatRequest(""));
        ch.writeInbound(queued);
        assertThat(queued.refCnt()).isEqualTo(1);

        ch.close();

        assertThat(queued.refCnt()).isZero();
        ch.advanceTimeBy(2, TimeUnit.SECONDS);
        ch.runScheduledPendingTasks();
        assertThat(ch.finishAndReleaseAll()).isTrue(); // the stream head went out before the close
    }

    @Test
    void channelRead_observerSeesEachRequestBeforeRelease() {
        AtomicInteger refCntSeen = new AtomicInteger(-1);
        List<String> bodies = new ArrayList<>();
        EmbeddedChannel ch = new EmbeddedChannel(new SimulatorHandler(new SimulatorEngine(SimulatorSettings.DEFAULT),
                null, r -> {
                    refCntSeen.set(r.refCnt());
                    bodies.add(r.content().toString(StandardCharsets.UTF_8));
                }));

        ch.writeInbound(post("/nope", "{\"a\":1}"));

        assertThat(refCntSeen.get()).isEqualTo(1);
        assertThat(bodies).containsExactly("{\"a\":1}");
        FullHttpResponse response = ch.readOutbound();
        assertThat(response.status().code()).isEqualTo(404);
        response.release();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void channelRead_connectionClose_closesAfterAnswer() {
        EmbeddedChannel ch = channel();

        ch.writeInbound(post("/v1/embeddings", "{\"model\":\"e\",\"input\":\"x\"}", "connection", "close"));

        FullHttpResponse response = ch.readOutbound();
        assertThat(response.headers().get(HttpHeaderNames.CONNECTION)).isEqualTo("close");
        response.release();
        assertThat(ch.isOpen()).isFalse();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }
}
