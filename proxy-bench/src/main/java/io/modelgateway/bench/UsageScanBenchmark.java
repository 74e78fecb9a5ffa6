package io.modelgateway.bench;

import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelgateway.codecs.json.JsonScanner;
import io.modelgateway.codecs.usage.BodyUsageScanner;
import io.modelgateway.codecs.usage.UsageCounts;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What accounting costs the pass-through relay on a non-stream answer: {@link BodyUsageScanner} looks at every
 * byte of the answer as its pieces go by ({@code ProxyExchange} relay mode) and parses only the {@code usage}
 * object at the end. The baseline is a gateway that aggregates the answer and parses it into a Jackson tree to
 * read {@code usage}. A reference in between, a streaming JSON scanner over the aggregated bytes that
 * skips everything but {@code usage}, tests the scanner's own claim that a byte scan beats tokenising.
 *
 * <p>Answers (compact JSON, usage last, as OpenAI-compatible servers send it): {@code chat}, a chat completion of
 * about 1 KB; {@code embeddingsFloat}, 16 inputs × 1536 floats as JSON numbers (about 300 KB);
 * {@code embeddingsBase64}, the same vectors as base64 little-endian float32 (about 130 KB). They arrive as
 * direct buffers of 8 KiB, as the upstream HTTP codec hands socket reads on. The sizes are printed at set-up:
 * divide them by the scores for bytes per second.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
// The Jackson tree baseline needs seconds of C2 work to settle on a busy 2-core VM; a short warm-up flatters us.
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class UsageScanBenchmark {
    static final int PIECE = 8192;
    static final int INPUTS = 16;
    static final int DIMENSIONS = 1536;
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

    @Param({"chat", "embeddingsFloat", "embeddingsBase64"})
    public String answer;

    private ByteBuf[] pieces;
    private int length;
    private long expected;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        byte[] bytes = MAPPER.writeValueAsBytes(switch (answer) {
            case "chat" -> chatCompletion();
            case "embeddingsFloat" -> embeddings(false);
            case "embeddingsBase64" -> embeddings(true);
            default -> throw new IllegalArgumentException(answer);
        });
        length = bytes.length;
        pieces = new ByteBuf[(bytes.length + PIECE - 1) / PIECE];
        for (int i = 0; i < pieces.length; i++) {
            int off = i * PIECE;
            int len = Math.min(PIECE, bytes.length - off);
            pieces[i] = ALLOC.directBuffer(len).writeBytes(bytes, off, len);
        }
        expected = MAPPER.readTree(bytes).path("usage").path("prompt_tokens").asLong();
        System.out.println("\n[UsageScan] " + answer + ": " + length + " bytes in " + pieces.length + " pieces");
        if (scan() != expected || treeParseBaseline() != expected || streamingParserReference() != expected) {
            throw new IllegalStateException("the three ways disagree on the usage");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        for (ByteBuf p : pieces) {
            p.release();
        }
    }

    /** The relay: every piece through the scanner as it passes, the usage object parsed at the end. */
    @Benchmark
    public long scan() {
        BodyUsageScanner scanner = new BodyUsageScanner();
        for (ByteBuf piece : pieces) {
            scanner.feed(piece);
        }
        UsageCounts counts = scanner.counts();
        return counts == null ? -1 : counts.usage().promptTokens();
    }

    /** Baseline: aggregate, parse into a tree, read usage. */
    @Benchmark
    public long treeParseBaseline() throws Exception {
        JsonNode usage = MAPPER.readTree(aggregate()).get("usage");
        return usage == null ? -1 : usage.path("prompt_tokens").asLong();
    }

    /** Reference: aggregate, then a streaming scanner that skips every top-level member but usage. */
    @Benchmark
    public long streamingParserReference() throws Exception {
        byte[] all = aggregate();
        JsonScanner s = new JsonScanner(1000, 1000);
        s.reset(all, 0, all.length);
        long prompt = -1;
        if (s.next() != JsonToken.START_OBJECT) {
            return prompt;
        }
        while (s.next() == JsonToken.FIELD_NAME) {
            String name = s.currentName();
            if (s.next() == JsonToken.START_OBJECT && name.equals("usage")) {
                UsageCounts counts = new UsageCounts();
                counts.read(s);
                prompt = counts.usage().promptTokens();
            } else {
                s.skipValue();
            }
        }
        return prompt;
    }

    /** What an aggregating gateway holds before it parses: the whole answer in one array. */
    private byte[] aggregate() {
        byte[] all = new byte[length];
        int at = 0;
        for (ByteBuf piece : pieces) {
            int n = piece.readableBytes();
            piece.getBytes(piece.readerIndex(), all, at, n);
            at += n;
        }
        return all;
    }

    static ObjectNode chatCompletion() {
        ObjectNode root = MAPPER.createObjectNode();
        root.put("id", "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG");
        root.put("object", "chat.completion");
        root.put("created", 1741570283);
        root.put("model", "gpt-4o-2024-08-06");
        ObjectNode choice = root.putArray("choices").addObject();
        choice.put("index", 0);
        ObjectNode message = choice.putObject("message");
        message.put("role", "assistant");
        message.put("content", Prose.text(560, 4));
        message.putNull("refusal");
        message.putArray("annotations");
        choice.putNull("logprobs");
        choice.put("finish_reason", "stop");
        ObjectNode usage = root.putObject("usage");
        usage.put("prompt_tokens", 1117);
        usage.put("completion_tokens", 131);
        usage.put("total_tokens", 1248);
        usage.putObject("prompt_tokens_details").put("cached_tokens", 0).put("audio_tokens", 0);
        usage.putObject("completion_tokens_details").put("reasoning_tokens", 0).put("audio_tokens", 0)
                .put("accepted_prediction_tokens", 0).put("rejected_prediction_tokens", 0);
        root.put("service_tier", "default");
        root.put("system_fingerprint", "fp_eb9dce56a8");
        return root;
    }

    /** {@value #INPUTS} embeddings of {@value #DIMENSIONS} dimensions, unit-length like OpenAI's. */
    static ObjectNode embeddings(boolean base64) {
        SplittableRandom random = new SplittableRandom(42);
        ObjectNode root = MAPPER.createObjectNode();
        root.put("object", "list");
        ArrayNode data = root.putArray("data");
        for (int i = 0; i < INPUTS; i++) {
            float[] v = new float[DIMENSIONS];
            double norm = 0;
            for (int d = 0; d < DIMENSIONS; d++) {
                v[d] = (float) gaussian(random);
                norm += v[d] * v[d];
            }
            ObjectNode item = data.addObject();
            item.put("object", "embedding");
            item.put("index", i);
            if (base64) {
                ByteBuffer le = ByteBuffer.allocate(4 * DIMENSIONS).order(ByteOrder.LITTLE_ENDIAN);
                for (float f : v) {
                    le.putFloat((float) (f / Math.sqrt(norm)));
                }
                item.put("embedding", Base64.getEncoder().encodeToString(le.array()));
            } else {
                ArrayNode e = item.putArray("embedding");
                for (float f : v) {
                    e.add((float) (f / Math.sqrt(norm)));
                }
            }
        }
        root.put("model", "text-embedding-3-small");
        root.putObject("usage").put("prompt_tokens", 131).put("total_tokens", 131);
        return root;
    }

    private static double gaussian(SplittableRandom r) {
        double u = 1 - r.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r.nextDouble());
    }
}
