package io.modelgateway.bench;

import io.modelgateway.codecs.aws.EventStreamDecoder;
import io.modelgateway.codecs.aws.SigV4Signer;
import io.modelgateway.codecs.bedrock.BedrockModels;
import io.modelgateway.codecs.bedrock.InvokeStreamChunks;
import io.modelgateway.codecs.sse.SseEventScanner;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What Amazon Bedrock adds per request and per stream event, in ns per operation (run with {@code -prof gc} for the
 * bytes allocated):
 * <ul>
 *   <li>{@code sign}: SigV4 of one InvokeModel request as {@code BedrockTarget} signs it — the payload hash of a
 *       2 KB body read from its direct buffer, the canonical request and string to sign, the HMAC with the signing
 *       key cached for the day; baseline {@code signFreshKey}: the same with the signing key derived anew (four more
 *       HMACs and a new signer), what the per-day cache saves;</li>
 *   <li>{@code decodeEventStream}: a 50-token Claude stream in AWS event-stream framing, in 4 KiB reads — both CRCs,
 *       the headers, the base64 of each {@code chunk} event decoded into the Anthropic SSE event it carries, one
 *       pooled buffer per event; baseline {@code scanSse}: the same Anthropic events as plain SSE through
 *       {@link SseEventScanner}, what an Anthropic upstream costs the gateway before anything else.</li>
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class BedrockBenchmark {
    static final int TOKENS = 50;
    static final int EVENTS = TOKENS + 6;
    static final int READ = 4096;
    private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
    private static final String MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
    private static final String[] NAMES = {"content-type", "host", "x-amz-content-sha256", "x-amz-date"};
    private static final String SIGNED = SigV4Signer.signedHeaders(NAMES, NAMES.length);

    private final SigV4Signer signer =
            new SigV4Signer("AKIDBENCH00000000001", "bench/Secret+Key0123456789abcdef", "us-east-1", "bedrock");
    private final CharSequence[] values = new CharSequence[NAMES.length];
    private ByteBuf body;
    private String canonicalUri;
    private ByteBuf[] eventStreamReads;
    private ByteBuf[] sseReads;
    private long now;

    @Setup(Level.Trial)
    public void setUp() {
        StringBuilder b = new StringBuilder("{\"anthropic_version\":\"bedrock-2023-05-31\",\"max_tokens\":1024,"
                + "\"system\":\"You are a helpful assistant.\",\"messages\":[");
        for (int i = 0; b.length() < 2000; i++) {
            b.append(i == 0 ? "" : ",").append("{\"role\":\"").append(i % 2 == 0 ? "user" : "assistant")
                    .append("\",\"content\":\"").append(json(Prose.text(150, i))).append("\"}");
        }
        b.append("]}");
        byte[] json = b.toString().getBytes(StandardCharsets.UTF_8);
        body = ALLOC.directBuffer(json.length).writeBytes(json);
        canonicalUri = BedrockModels.canonicalUri(BedrockModels.path(MODEL, BedrockModels.Operation.INVOKE_STREAM));
        now = 1_764_000_000_000L;

        ByteArrayOutputStream frames = new ByteArrayOutputStream();
        ByteArrayOutputStream sse = new ByteArrayOutputStream();
        for (String event : claudeStream()) {
            frames.writeBytes(chunkFrame(event));
            String type = event.substring(9, event.indexOf('"', 9));
            sse.writeBytes(("event: " + type + "\ndata: " + event + "\n\n").getBytes(StandardCharsets.UTF_8));
        }
        eventStreamReads = reads(frames.toByteArray());
        sseReads = reads(sse.toByteArray());
        // Both paths must yield the same SSE bytes before anything is measured.
        ByteArrayOutputStream decoded = new ByteArrayOutputStream();
        int[] n = new int[1];
        decode(out -> {
            decoded.writeBytes(bytes(out));
            n[0]++;
        });
        if (n[0] != EVENTS || !java.util.Arrays.equals(decoded.toByteArray(), sse.toByteArray())) {
            throw new IllegalStateException("decoded " + n[0] + " events, same bytes as SSE: "
                    + java.util.Arrays.equals(decoded.toByteArray(), sse.toByteArray()));
        }
        System.out.println("\n[Bedrock] body " + json.length + " bytes; event stream " + frames.size() + " bytes ("
                + eventStreamReads.length + " reads), SSE " + sse.size() + " bytes, " + EVENTS + " events");
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        body.release();
        for (ByteBuf r : eventStreamReads) {
            r.release();
        }
        for (ByteBuf r : sseReads) {
            r.release();
        }
    }

    /** SigV4 of one request, signing key cached (the gateway's way). */
    @Benchmark
    public String sign() {
        return sign(signer);
    }

    /** Baseline: the same with the signing key derived for this request. */
    @Benchmark
    public String signFreshKey() {
        return sign(new SigV4Signer("AKIDBENCH00000000001", "bench/Secret+Key0123456789abcdef", "us-east-1",
                "bedrock"));
    }

    private String sign(SigV4Signer s) {
        String amzDate = s.amzDate(now);
        String hash = s.payloadHash(body.nioBuffers());
        values[0] = "application/json";
        values[1] = "bedrock-runtime.us-east-1.amazonaws.com";
        values[2] = hash;
        values[3] = amzDate;
        return s.authorization("POST", canonicalUri, "", NAMES, values, NAMES.length, SIGNED, hash, amzDate);
    }

    /** The event stream decoded into SSE events, per event. */
    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public void decodeEventStream(Blackhole bh) {
        decode(out -> {
            bh.consume(out.readableBytes());
            out.release();
        });
    }

    /** Baseline: the same events as SSE, scanned (what a plain Anthropic stream costs), per event. */
    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public void scanSse(Blackhole bh) {
        SseEventScanner scanner = new SseEventScanner(ALLOC);
        for (ByteBuf read : sseReads) {
            scanner.feed(read.duplicate(), event -> {
                bh.consume(event.readableBytes());
                event.release();
            });
        }
        scanner.release();
    }

    private void decode(java.util.function.Consumer<ByteBuf> out) {
        EventStreamDecoder decoder = new EventStreamDecoder(ALLOC, 1 << 20);
        InvokeStreamChunks chunks = new InvokeStreamChunks();
        for (ByteBuf read : eventStreamReads) {
            String failure = decoder.feed(read.duplicate(), m -> out.accept(chunks.toSse(ALLOC, m.payload())));
            if (failure != null) {
                throw new IllegalStateException(failure);
            }
        }
        decoder.release();
    }

    // ------------------------------------------------------------------ the stream

    private static String[] claudeStream() {
        String[] events = new String[EVENTS];
        events[0] = "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_bdrk_01\",\"type\":\"message\",\"role\":"
                + "\"assistant\",\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[],\"stop_reason\":null,"
                + "\"stop_sequence\":null,\"usage\":{\"input_tokens\":1117,\"output_tokens\":1}}}";
        events[1] = "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}";
        String[] tokens = Prose.tokens(TOKENS, 7);
        for (int i = 0; i < TOKENS; i++) {
            events[2 + i] = "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
                    + "\"text\":\"" + json(tokens[i]) + "\"}}";
        }
        events[TOKENS + 2] = "{\"type\":\"content_block_stop\",\"index\":0}";
        events[TOKENS + 3] = "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":"
                + "null},\"usage\":{\"output_tokens\":" + TOKENS + "}}";
        events[TOKENS + 4] = "{\"type\":\"message_stop\",\"amazon-bedrock-invocationMetrics\":{\"inputTokenCount\":"
                + "1117,\"outputTokenCount\":" + TOKENS + ",\"invocationLatency\":2000,\"firstByteLatency\":300}}";
        events[TOKENS + 5] = "{\"type\":\"ping\"}";
        return events;
    }

    /**
     * One {@code chunk} message as Bedrock frames it (prelude, the three string headers, the payload, both CRC32s);
     * the decoder's own tests check it against AWS's codec, this only feeds the benchmark.
     */
    public static byte[] chunkFrame(String event) {
        String payload = "{\"bytes\":\"" + Base64.getEncoder().encodeToString(event.getBytes(StandardCharsets.UTF_8))
                + "\",\"p\":\"abcdefghijklmnopqrstuvwxyzABCDEFGHIJ\"}";
        ByteArrayOutputStream h = new ByteArrayOutputStream();
        header(h, ":event-type", "chunk");
        header(h, ":content-type", "application/json");
        header(h, ":message-type", "event");
        byte[] headers = h.toByteArray();
        byte[] p = payload.getBytes(StandardCharsets.UTF_8);
        int total = 12 + headers.length + p.length + 4;
        ByteBuffer b = ByteBuffer.allocate(total);
        b.putInt(total).putInt(headers.length);
        CRC32 crc = new CRC32();
        crc.update(b.array(), 0, 8);
        b.putInt((int) crc.getValue());
        b.put(headers).put(p);
        crc.reset();
        crc.update(b.array(), 0, total - 4);
        b.putInt((int) crc.getValue());
        return b.array();
    }

    private static void header(ByteArrayOutputStream out, String name, String value) {
        byte[] n = name.getBytes(StandardCharsets.US_ASCII);
        byte[] v = value.getBytes(StandardCharsets.UTF_8);
        out.write(n.length);
        out.writeBytes(n);
        out.write(7);
        out.write(v.length >> 8);
        out.write(v.length);
        out.writeBytes(v);
    }

    /** Text as the inside of a JSON string. */
    private static String json(String text) {
        return text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    private static ByteBuf[] reads(byte[] all) {
        ByteBuf[] reads = new ByteBuf[(all.length + READ - 1) / READ];
        for (int i = 0; i < reads.length; i++) {
            int off = i * READ;
            int len = Math.min(READ, all.length - off);
            reads[i] = ALLOC.directBuffer(len).writeBytes(all, off, len);
        }
        return reads;
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] out = new byte[b.readableBytes()];
        b.getBytes(b.readerIndex(), out);
        b.release();
        return out;
    }
}
