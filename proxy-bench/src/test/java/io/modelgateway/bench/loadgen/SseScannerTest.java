package io.modelgateway.bench.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class SseScannerTest {
    private static final String OPENAI = """
            data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}

            data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"morning"}}]}

            data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" anchor"}}]}

            data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

            data: [DONE]

            """;

    private static final String ANTHROPIC = """
            event: message_start
            data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[]}}

            event: ping
            data: {"type":"ping"}

            event: content_block_start
            data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

            event: content_block_delta
            data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"tokens"}}

            event: content_block_delta
            data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" velvet"}}

            event: content_block_stop
            data: {"type":"content_block_stop","index":0}

            event: message_delta
            data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}

            event: message_stop
            data: {"type":"message_stop"}

            """;

    @Test
    void openAiStream_everyDataChunkButDoneIsContent_doneEndsIt() {
        SseScanner s = scanWhole(OPENAI);
        assertThat(s.contentEvents()).isEqualTo(4);
        assertThat(s.ended()).isTrue();
        assertThat(s.failed()).isFalse();
    }

    @Test
    void anthropicStream_onlyDeltasAreContent_messageStopEndsIt() {
        SseScanner s = scanWhole(ANTHROPIC);
        assertThat(s.contentEvents()).isEqualTo(2);
        assertThat(s.ended()).isTrue();
        assertThat(s.failed()).isFalse();
    }

    @Test
    void anyChunking_sameCounts() {
        for (String transcript : new String[] {OPENAI, ANTHROPIC, OPENAI.replace("\n", "\r\n")}) {
            byte[] bytes = transcript.getBytes(StandardCharsets.UTF_8);
            SseScanner whole = scanWhole(transcript);
            for (int cut = 1; cut < bytes.length; cut++) {
                SseScanner s = new SseScanner();
                s.reset();
                int n = scan(s, bytes, 0, cut) + scan(s, bytes, cut, bytes.length) + s.finish();
                assertThat(n).as("cut at %d", cut).isEqualTo(whole.contentEvents());
                assertThat(s.ended()).as("cut at %d", cut).isTrue();
            }
            // One byte at a time.
            SseScanner s = new SseScanner();
            s.reset();
            for (int i = 0; i < bytes.length; i++) {
                scan(s, bytes, i, i + 1);
            }
            s.finish();
            assertThat(s.contentEvents()).isEqualTo(whole.contentEvents());
            assertThat(s.ended()).isTrue();
        }
    }

    @Test
    void crlfLineEndings_areBlankLines() {
        SseScanner s = scanWhole(OPENAI.replace("\n", "\r\n"));
        assertThat(s.contentEvents()).isEqualTo(4);
        assertThat(s.ended()).isTrue();
    }

    @Test
    void openAiErrorEvent_failsTheStream() {
        SseScanner s = scanWhole("""
                data: {"choices":[{"delta":{"content":"a"}}]}

                data: {"error":{"message":"injected","type":"server_error"}}

                """);
        assertThat(s.contentEvents()).isEqualTo(1);
        assertThat(s.failed()).isTrue();
        assertThat(s.ended()).isFalse();
    }

    @Test
    void anthropicErrorEvent_failsTheStream() {
        SseScanner s = scanWhole("""
                event: content_block_delta
                data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}

                event: error
                data: {"type":"error","error":{"type":"overloaded_error","message":"x"}}

                """);
        assertThat(s.contentEvents()).isEqualTo(1);
        assertThat(s.failed()).isTrue();
        assertThat(s.ended()).isFalse();
    }

    @Test
    void anthropicDataWithoutEventLines_classifiedByType() {
        SseScanner s = scanWhole(ANTHROPIC.replaceAll("(?m)^event: .*\\n", ""));
        assertThat(s.contentEvents()).isEqualTo(2);
        assertThat(s.ended()).isTrue();
    }

    @Test
    void cutStream_notEnded() {
        String cut = OPENAI.substring(0, OPENAI.indexOf("data: [DONE]"));
        SseScanner s = scanWhole(cut);
        assertThat(s.contentEvents()).isEqualTo(4);
        assertThat(s.ended()).isFalse();
    }

    @Test
    void doneWithoutBlankLineAtTheEnd_stillEnds() {
        SseScanner s = scanWhole("data: {\"choices\":[]}\n\ndata: [DONE]\n");
        assertThat(s.contentEvents()).isEqualTo(1);
        assertThat(s.ended()).isTrue();
    }

    @Test
    void commentsAndIds_areNotEvents() {
        SseScanner s = scanWhole(": keep-alive\n\nid: 7\nretry: 10\n\ndata: x\n\n");
        assertThat(s.contentEvents()).isEqualTo(1);
    }

    @Test
    void longLines_spanningChunks_areClassifiedByTheirStart() {
        String big = "data: {\"choices\":[{\"delta\":{\"content\":\"" + "x".repeat(10_000) + "\"}}]}\n\n"
                + "data: [DONE]\n\n";
        SseScanner s = scanWhole(big);
        assertThat(s.contentEvents()).isEqualTo(1);
        assertThat(s.ended()).isTrue();
    }

    @Test
    void reset_forgetsThePreviousResponse() {
        SseScanner s = scanWhole(OPENAI);
        s.reset();
        assertThat(s.contentEvents()).isZero();
        assertThat(s.ended()).isFalse();
    }

    private static SseScanner scanWhole(String text) {
        SseScanner s = new SseScanner();
        s.reset();
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        scan(s, bytes, 0, bytes.length);
        s.finish();
        return s;
    }

    private static int scan(SseScanner s, byte[] bytes, int from, int to) {
        // Offset inside a larger direct buffer, so reader indexes other than 0 are exercised.
        ByteBuf buf = Unpooled.directBuffer(to - from + 8);
        try {
            buf.writeZero(3).writeBytes(bytes, from, to - from).skipBytes(3);
            int n = s.scan(buf);
            assertThat(buf.readerIndex()).isEqualTo(3);
            return n;
        } finally {
            buf.release();
        }
    }
}
