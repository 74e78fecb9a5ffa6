package io.modelgateway.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.codecs.sse.EventBytes;
import io.modelgateway.codecs.sse.SseEventScanner;
import io.modelgateway.codecs.usage.StreamUsageTracker;
import io.modelgateway.codecs.usage.UsageCounts;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The pass-through stream path, in upstream events per second. The gateway ({@code ProxyExchange} in
 * stream mode) finds event boundaries with {@link SseEventScanner}, shows every event to
 * {@link StreamUsageTracker} (a byte search for {@code "usage":{}; only the usage chunk is parsed) and hands
 * the event on as a retained slice of the upstream buffers. The baseline is a gateway that decodes every event
 * — bytes to a String, split into lines, the {@code data:} JSON parsed into a Jackson tree, usage read from the
 * tree — and encodes it again (tree back to JSON, framed as {@code data: …\n\n} in a new buffer). A third
 * method, the splice without the usage tracker, shows what looking at every event for usage costs.
 *
 * <p>One invocation is one OpenAI chat stream as a real upstream sends it when asked for usage: a role chunk,
 * {@value #TOKENS} content chunks each carrying {@code "usage":null}, a finish chunk, the usage chunk and
 * {@code [DONE]} — {@value #EVENTS} events, about 17 KB, arriving in 4 KiB reads (cut mid-event, some cuts
 * inside multi-byte characters). The reads are built once; the socket read itself is not measured. The caller
 * asked for usage, so no event is withheld and both sides write all of them.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
// The Jackson tree baseline needs seconds of C2 work to settle on a busy 2-core VM; a short warm-up flatters us.
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class SseSpliceBenchmark {
    static final int TOKENS = 50;
    static final int EVENTS = TOKENS + 4;
    static final int READ = 4096;
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
    private static final ByteBuf BLANK_LINE = Unpooled.unreleasableBuffer(
            Unpooled.wrappedBuffer(new byte[] {'\n', '\n'}));
    private static final byte[] DATA = "data: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVENT_END = {'\n', '\n'};
    private static final byte[] DONE = "data: [DONE]\n\n".getBytes(StandardCharsets.US_ASCII);

    private byte[] stream;
    /** The upstream reads, direct and pooled like a socket's; feeding never consumes them. */
    private ByteBuf[] reads;

    @Setup(Level.Trial)
    public void setUp() {
        stream = openAiStream();
        reads = new ByteBuf[(stream.length + READ - 1) / READ];
        for (int i = 0; i < reads.length; i++) {
            int off = i * READ;
            int len = Math.min(READ, stream.length - off);
            reads[i] = ALLOC.directBuffer(len).writeBytes(stream, off, len);
        }
        System.out.println("\n[SseSplice] stream: " + stream.length + " bytes, " + EVENTS + " events, "
                + reads.length + " reads");
        // Both ways must hand on the same events and find the same usage.
        Check splice = new Check();
        long usage = splice(splice, true);
        Check decode = new Check();
        long usage2 = decodeAndReencode(decode);
        if (splice.events != EVENTS || decode.events != EVENTS || usage != usage2 || usage != 1117L * 1000 + 50
                || !Arrays.equals(splice.bytes.toByteArray(), stream)) {
            throw new IllegalStateException("splice: " + splice.events + " events, usage " + usage
                    + "; decode: " + decode.events + " events, usage " + usage2);
        }
        // Jackson writes the trees back byte for byte here (compact input, no escapes it would change); it
        // need not, but when it does the two sides also write the same number of bytes.
        System.out.println("[SseSplice] re-encoded stream identical to upstream: "
                + Arrays.equals(decode.bytes.toByteArray(), stream));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        for (ByteBuf r : reads) {
            r.release();
        }
    }

    /** The pass-through as the gateway did it before 3c63b9f: scan, track usage, hand on slices. Score: events/s. */
    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public long spliceWithUsage(Blackhole bh) {
        return splice(out -> {
            bh.consume(out.readableBytes());
            out.release();
        }, true);
    }

    /**
     * The gateway's HTTP/1.1 pass-through since the scanner lends ranges (3c63b9f): each event's bytes copied out
     * once for the checks and the usage search ({@link EventBytes}), then copied into the read's merged chunk; no
     * slice per event. The chunk is handed on at the end of each read, as the answer writer does. Score: events/s.
     */
    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public long rangesWithUsage(Blackhole bh) {
        StreamUsageTracker usage = new StreamUsageTracker();
        Chunk chunk = new Chunk();
        return merged(bh, usage, chunk, (buf, index, length) -> {
            usage.onEvent(EventBytes.of(buf, index, length));
            chunk.append(buf, index, length);
        });
    }

    /**
     * {@link #rangesWithUsage} as the gateway did it before 3c63b9f: a retained slice per event, its bytes copied out
     * for the checks, then copied into the read's merged chunk and the slice released. Score: events/s.
     */
    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public long slicesMergedWithUsage(Blackhole bh) {
        StreamUsageTracker usage = new StreamUsageTracker();
        Chunk chunk = new Chunk();
        return merged(bh, usage, chunk, (buf, index, length) -> {
            ByteBuf event = buf.retainedSlice(index, length);
            try {
                usage.onEvent(EventBytes.of(event));
                chunk.append(event, event.readerIndex(), event.readableBytes());
            } finally {
                event.release();
            }
        });
    }

    /** Feeds every read to {@code onEvent}, handing the read's chunk on after each; returns the usage as below. */
    private long merged(Blackhole bh, StreamUsageTracker usage, Chunk chunk, SseEventScanner.EventSink onEvent) {
        SseEventScanner scanner = new SseEventScanner(ALLOC);
        for (ByteBuf read : reads) {
            scanner.feed(read, onEvent);
            chunk.handOn(bh);
        }
        scanner.release();
        UsageCounts c = usage.counts();
        return c == null ? -1 : c.usage().promptTokens() * 1000 + c.usage().completionTokens();
    }

    /** A read's merged chunk, as the answer writer keeps it: made at the read's first event, handed on at its end. */
    private static final class Chunk {
        private ByteBuf buf;

        void append(ByteBuf src, int index, int length) {
            if (buf == null) {
                buf = ALLOC.directBuffer(4096);
            }
            buf.ensureWritable(length);
            src.getBytes(index, buf, buf.writerIndex(), length);
            buf.writerIndex(buf.writerIndex() + length);
        }

        void handOn(Blackhole bh) {
            if (buf != null) {
                bh.consume(buf.readableBytes());
                buf.release();
                buf = null;
            }
        }
    }

    /** The splice alone (how the stream path was before usage accounting). Score: events/s. */
    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public long spliceOnly(Blackhole bh) {
        return splice(out -> {
            bh.consume(out.readableBytes());
            out.release();
        }, false);
    }

    /** Baseline: decode every event, parse its JSON, read usage, write the JSON back and frame it. Events/s. */
    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public long decodeAndReencodeBaseline(Blackhole bh) {
        return decodeAndReencode(out -> {
            bh.consume(out.readableBytes());
            out.release();
        });
    }

    /** Returns prompt tokens × 1000 + completion tokens, so the work cannot be thrown away. */
    private long splice(Consumer<ByteBuf> write, boolean trackUsage) {
        SseEventScanner scanner = new SseEventScanner(ALLOC);
        StreamUsageTracker usage = trackUsage ? new StreamUsageTracker() : null;
        Consumer<ByteBuf> onEvent = usage == null ? write : event -> {
            usage.onEvent(event); // true for the usage chunk, which this caller asked for: it goes on too
            write.accept(event);
        };
        for (ByteBuf read : reads) {
            scanner.feed(read, onEvent);
        }
        ByteBuf rest = scanner.drainRemainder();
        if (rest != null) {
            onEvent.accept(rest);
        }
        scanner.release();
        if (usage == null || usage.counts() == null) {
            return -1;
        }
        UsageCounts c = usage.counts();
        return c.usage().promptTokens() * 1000 + c.usage().completionTokens();
    }

    /**
     * What a decoding gateway does. Bytes are gathered until a blank line (decoding a read on its own would
     * break characters cut between reads), each event becomes a String, its {@code data:} lines are joined and
     * parsed into a tree; usage is read from the tree; the tree is written back and framed in a new buffer.
     */
    private long decodeAndReencode(Consumer<ByteBuf> write) {
        ByteBuf pending = ALLOC.heapBuffer(2 * READ);
        long usage = -1;
        try {
            for (ByteBuf read : reads) {
                pending.writeBytes(read, read.readerIndex(), read.readableBytes());
                int end;
                while ((end = ByteBufUtil.indexOf(BLANK_LINE, pending)) >= 0) {
                    String event = pending.toString(pending.readerIndex(), end - pending.readerIndex(),
                            StandardCharsets.UTF_8);
                    pending.readerIndex(end + 2);
                    long u = reencode(event, write);
                    if (u >= 0) {
                        usage = u;
                    }
                }
                pending.discardReadBytes();
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        } finally {
            pending.release();
        }
        return usage;
    }

    private static long reencode(String event, Consumer<ByteBuf> write) throws Exception {
        StringBuilder data = new StringBuilder(event.length());
        for (String line : event.split("\n")) {
            if (line.startsWith("data:")) {
                if (data.length() > 0) {
                    data.append('\n');
                }
                data.append(line, line.startsWith("data: ") ? 6 : 5, line.length());
            }
        }
        if (data.toString().equals("[DONE]")) {
            write.accept(ALLOC.directBuffer(DONE.length).writeBytes(DONE));
            return -1;
        }
        JsonNode tree = MAPPER.readTree(data.toString());
        JsonNode usage = tree.get("usage");
        long counted = -1;
        if (usage != null && usage.isObject()) {
            counted = usage.path("prompt_tokens").asLong() * 1000 + usage.path("completion_tokens").asLong();
        }
        byte[] json = MAPPER.writeValueAsBytes(tree);
        ByteBuf out = ALLOC.directBuffer(DATA.length + json.length + EVENT_END.length);
        write.accept(out.writeBytes(DATA).writeBytes(json).writeBytes(EVENT_END));
        return counted;
    }

    /** An OpenAI chat completion stream with {@code stream_options.include_usage} true, as the wire has it. */
    static byte[] openAiStream() {
        String head = "{\"id\":\"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT\",\"object\":\"chat.completion.chunk\","
                + "\"created\":1741570283,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\","
                + "\"system_fingerprint\":\"fp_eb9dce56a8\",\"choices\":[";
        StringBuilder o = new StringBuilder();
        o.append("data: ").append(head).append("{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\","
                + "\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n");
        for (String token : Prose.tokens(TOKENS, 2)) {
            o.append("data: ").append(head).append("{\"index\":0,\"delta\":{\"content\":\"").append(jsonEscape(token))
                    .append("\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n");
        }
        o.append("data: ").append(head).append("{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}],"
                + "\"usage\":null}\n\n");
        o.append("data: ").append(head).append("],\"usage\":{\"prompt_tokens\":1117,\"completion_tokens\":50,"
                + "\"total_tokens\":1167,\"prompt_tokens_details\":{\"cached_tokens\":0,\"audio_tokens\":0},"
                + "\"completion_tokens_details\":{\"reasoning_tokens\":0,\"audio_tokens\":0,"
                + "\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}}\n\n");
        o.append("data: [DONE]\n\n");
        return o.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static String jsonEscape(String s) {
        try {
            String quoted = MAPPER.writeValueAsString(s);
            return quoted.substring(1, quoted.length() - 1);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Collects what a run writes, for the set-up check; releases each buffer like a socket write would. */
    private static final class Check implements Consumer<ByteBuf> {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int events;

        @Override
        public void accept(ByteBuf out) {
            events++;
            bytes.writeBytes(ByteBufUtil.getBytes(out));
            out.release();
        }
    }
}
