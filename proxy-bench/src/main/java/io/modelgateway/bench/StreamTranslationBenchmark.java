package io.modelgateway.bench;

import io.modelgateway.codecs.sse.SseEventScanner;
import io.modelgateway.codecs.translate.ChatRequestToMessages;
import io.modelgateway.codecs.translate.ChatRequestToMessagesOptions;
import io.modelgateway.codecs.translate.MessagesRequestToChat;
import io.modelgateway.codecs.translate.MessagesRequestToChatOptions;
import io.modelgateway.codecs.translate.ResponseTranslator;
import io.modelgateway.codecs.translate.StreamTranslator;
import io.modelgateway.codecs.translate.TranslatedRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Streamed answers through the gateway's stream path, in events per second: the pass-through splice (scan
 * event boundaries, hand on slices) against translation into the other style (scan, then one small state
 * machine step per event), for both directions. Each invocation processes one 50-token answer delivered in
 * upstream reads of 4 KiB, as a socket would.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class StreamTranslationBenchmark {
    static final int TOKENS = 50;
    private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

    private byte[] anthropicStream;
    private byte[] openAiStream;
    private ResponseTranslator toChat;
    private ResponseTranslator toMessages;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        StringBuilder a = new StringBuilder();
        a.append(event("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\","
                + "\"model\":\"claude-x\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":25,"
                + "\"output_tokens\":1,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0}}}"));
        a.append(event("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}"));
        for (int i = 0; i < TOKENS; i++) {
            a.append(event("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
                    + "\"text\":\" token" + i + "\"}}"));
        }
        a.append(event("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}"));
        a.append(event("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},"
                + "\"usage\":{\"output_tokens\":50}}"));
        a.append(event("message_stop", "{\"type\":\"message_stop\"}"));
        anthropicStream = a.toString().getBytes(StandardCharsets.UTF_8);

        StringBuilder o = new StringBuilder();
        String head = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1787300000,\"model\":\"gpt-x\",\"choices\":[";
        o.append("data: ").append(head).append("{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n");
        for (int i = 0; i < TOKENS; i++) {
            o.append("data: ").append(head).append("{\"index\":0,\"delta\":{\"content\":\" token").append(i)
                    .append("\"},\"finish_reason\":null}]}\n\n");
        }
        o.append("data: ").append(head).append("{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n");
        o.append("data: ").append(head).append("],\"usage\":{\"prompt_tokens\":25,\"completion_tokens\":50,\"total_tokens\":75}}\n\n");
        o.append("data: [DONE]\n\n");
        openAiStream = o.toString().getBytes(StandardCharsets.UTF_8);

        toChat = translator(ChatRequestToMessages.translate(ALLOC, json("{\"model\":\"c\",\"stream\":true,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"), new ChatRequestToMessagesOptions("claude-x", 0, false)));
        toMessages = translator(MessagesRequestToChat.translate(ALLOC, json("{\"model\":\"m\",\"max_tokens\":100,\"stream\":true,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"), new MessagesRequestToChatOptions("gpt-x", true, false)));
    }

    private static ResponseTranslator translator(TranslatedRequest r) {
        r.body().release();
        return r.response();
    }

    private static ByteBuf json(String s) {
        return Unpooled.wrappedBuffer(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String event(String name, String data) {
        return "event: " + name + "\ndata: " + data + "\n\n";
    }

    /** Scores are upstream events per second (OperationsPerInvocation = events in one answer). */
    @Benchmark
    @OperationsPerInvocation(TOKENS + 5)
    public void passThroughAnthropic(Blackhole bh) {
        scan(anthropicStream, null, bh);
    }

    @Benchmark
    @OperationsPerInvocation(TOKENS + 5)
    public void translateAnthropicToChat(Blackhole bh) {
        scan(anthropicStream, toChat.newStream(ALLOC), bh);
    }

    @Benchmark
    @OperationsPerInvocation(TOKENS + 4)
    public void passThroughOpenAi(Blackhole bh) {
        scan(openAiStream, null, bh);
    }

    @Benchmark
    @OperationsPerInvocation(TOKENS + 4)
    public void translateChatToMessages(Blackhole bh) {
        scan(openAiStream, toMessages.newStream(ALLOC), bh);
    }

    private static void scan(byte[] stream, StreamTranslator translator, Blackhole bh) {
        SseEventScanner scanner = new SseEventScanner(ALLOC);
        Consumer<ByteBuf> sink = out -> {
            bh.consume(out.readableBytes());
            out.release();
        };
        Consumer<ByteBuf> onEvent = translator == null ? sink : e -> {
            try {
                translator.onEvent(e, sink);
            } finally {
                e.release();
            }
        };
        for (int off = 0; off < stream.length; off += 4096) {
            int len = Math.min(4096, stream.length - off);
            ByteBuf read = ALLOC.directBuffer(len).writeBytes(stream, off, len);
            scanner.feed(read, onEvent);
            read.release();
        }
        if (translator != null) {
            translator.onEnd(true, sink);
        }
        scanner.release();
    }
}
