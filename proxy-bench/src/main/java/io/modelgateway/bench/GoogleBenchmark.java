package io.modelgateway.bench;

import io.modelgateway.codecs.sse.SseEventScanner;
import io.modelgateway.codecs.translate.ChatRequestToGemini;
import io.modelgateway.codecs.translate.GeminiRequestOptions;
import io.modelgateway.codecs.translate.MessagesRequestToGemini;
import io.modelgateway.codecs.translate.ResponseTranslator;
import io.modelgateway.codecs.translate.StreamTranslator;
import io.modelgateway.codecs.translate.TranslatedRequest;
import io.modelgateway.core.config.GoogleSettings;
import io.modelgateway.core.upstream.ServiceAccountGrant;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.security.KeyPairGenerator;
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
 * The Google providers' per-request and per-event costs (issue 18): the Gemini {@code alt=sse} stream translated to
 * each caller style (a 50-token answer in 4 KiB reads, scored in upstream events per second, as
 * {@link StreamTranslationBenchmark} scores the other directions), the request translation to generateContent, and
 * the minting of one Vertex AI token grant (RS256 over a JWT with a 2048-bit key), which happens once per hour per
 * service account, never per request. Run with {@code -prof gc} for the bytes allocated.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class GoogleBenchmark {
    static final int TOKENS = 50;
    private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

    private byte[] geminiStream;
    private ResponseTranslator toChat;
    private ResponseTranslator toMessages;
    private GoogleSettings.ServiceAccount account;
    private byte[] chatRequest;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < TOKENS; i++) {
            boolean last = i == TOKENS - 1;
            s.append("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\" token").append(i)
                    .append("\"}],\"role\":\"model\"},").append(last ? "\"finishReason\":\"STOP\"," : "")
                    .append("\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":25,\"candidatesTokenCount\":")
                    .append(i + 1).append(",\"totalTokenCount\":").append(26 + i)
                    .append(",\"cachedContentTokenCount\":8,\"thoughtsTokenCount\":3},\"modelVersion\":\"gemini-2.5-flash\","
                            + "\"responseId\":\"resp-1\"}\r\n\r\n");
        }
        geminiStream = s.toString().getBytes(StandardCharsets.UTF_8);
        chatRequest = ("{\"model\":\"g\",\"stream\":true,\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},"
                + "{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":[{\"type\":\"function\",\"function\":{\"name\":"
                + "\"get_weather\",\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}}]}")
                .getBytes(StandardCharsets.UTF_8);
        GeminiRequestOptions options = new GeminiRequestOptions("gemini-2.5-flash", false);
        toChat = translator(ChatRequestToGemini.translate(ALLOC, Unpooled.wrappedBuffer(chatRequest), options));
        toMessages = translator(MessagesRequestToGemini.translate(ALLOC, Unpooled.wrappedBuffer(("{\"model\":\"m\","
                + "\"max_tokens\":100,\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
                .getBytes(StandardCharsets.UTF_8)), options));
        KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
        g.initialize(2048);
        account = new GoogleSettings.ServiceAccount("bench@p.iam.gserviceaccount.com", g.generateKeyPair().getPrivate(),
                "k1", "https://oauth2.googleapis.com/token");
    }

    private static ResponseTranslator translator(TranslatedRequest r) {
        r.body().release();
        return r.response();
    }

    /** Upstream Gemini events per second, translated for a chat caller. */
    @Benchmark
    @OperationsPerInvocation(TOKENS)
    public void geminiStreamToChat(Blackhole bh) {
        scan(geminiStream, toChat.newStream(ALLOC), bh);
    }

    /** Upstream Gemini events per second, translated for a messages caller. */
    @Benchmark
    @OperationsPerInvocation(TOKENS)
    public void geminiStreamToMessages(Blackhole bh) {
        scan(geminiStream, toMessages.newStream(ALLOC), bh);
    }

    /** The same bytes through the scanner alone: what pass-through of such a stream would cost. */
    @Benchmark
    @OperationsPerInvocation(TOKENS)
    public void geminiStreamScanOnly(Blackhole bh) {
        scan(geminiStream, null, bh);
    }

    /** One chat request (system, user, one tool) translated to a generateContent body, per request. */
    @Benchmark
    public void chatRequestToGemini(Blackhole bh) throws Exception {
        TranslatedRequest r = ChatRequestToGemini.translate(ALLOC, Unpooled.wrappedBuffer(chatRequest),
                new GeminiRequestOptions("gemini-2.5-flash", false));
        bh.consume(r.body().readableBytes());
        r.body().release();
    }

    /** One signed JWT grant assertion (once per token, i.e. per hour per service account). */
    @Benchmark
    public String vertexTokenAssertion() throws Exception {
        return ServiceAccountGrant.assertion(account, 1_787_300_000L);
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
