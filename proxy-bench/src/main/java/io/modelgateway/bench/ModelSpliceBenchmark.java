package io.modelgateway.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.json.BodySplicer;
import io.modelgateway.codecs.json.RequestPeek;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
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
 * The model alias rewrite, the whole per-request cost each way. The gateway peeks the body (it must, to
 * route) and splices the upstream model name between two retained slices of the original bytes
 * ({@code ExchangeHandler} does exactly this). The baseline is what a gateway without a splicer does: parse
 * the body into a Jackson tree (which also gives it the model to route on, so it needs no peek), set
 * {@code model}, and write the tree back to bytes.
 *
 * <p>Bodies are chat requests in the key order the OpenAI Python SDK sends ({@code messages} first, then
 * {@code model}, so the model is found only after the messages): {@code small} is a system prompt and three
 * turns (about 1.5 KB), {@code large} a long conversation with a pasted document (about 32 KB). Both ask for a
 * stream with usage, so the model is the only edit. The body sits in a direct buffer, as the request
 * aggregator leaves it. Not measured on either side: the socket write (the splice's composite goes out as a
 * gathering write of the original bytes; the baseline's heap array would first be copied to a direct buffer).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
// The Jackson tree baseline needs seconds of C2 work to settle on a busy 2-core VM; a short warm-up flatters us.
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ModelSpliceBenchmark {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
    /** What callers send, and what the deployment calls it upstream (different lengths, as usual). */
    static final String ALIAS = "chat-default";
    static final String UPSTREAM = "gpt-4o-2024-08-06";

    @Param({"small", "large"})
    public String body;

    private ByteBuf request;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        byte[] bytes = MAPPER.writeValueAsBytes(chatRequest(body.equals("large") ? 32 * 1024 : 1536));
        request = ALLOC.directBuffer(bytes.length).writeBytes(bytes);
        System.out.println("\n[ModelSplice] " + body + " body: " + bytes.length + " bytes");
        // Both ways must produce the same request, or the comparison means nothing.
        ByteBuf spliced = splice();
        try {
            JsonNode fromSplice = MAPPER.readTree(ByteBufUtil.getBytes(spliced));
            JsonNode fromTree = MAPPER.readTree(rewriteTree());
            if (!fromSplice.equals(fromTree) || !UPSTREAM.equals(fromSplice.path("model").asText())) {
                throw new IllegalStateException("splice and tree rewrite disagree");
            }
        } finally {
            spliced.release();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        request.release();
    }

    /** A chat request of about {@code size} bytes: a system prompt, then user and assistant turns. */
    static ObjectNode chatRequest(int size) {
        ObjectNode root = MAPPER.createObjectNode();
        ArrayNode messages = root.putArray("messages");
        messages.addObject().put("role", "system").put("content", Prose.text(Math.min(size / 3, 12_000), 0));
        int turn = 0;
        while (root.toString().length() < size - 200 || turn % 2 == 1) { // end on a user turn
            String role = turn % 2 == 0 ? "user" : "assistant";
            messages.addObject().put("role", role).put("content", Prose.text(turn % 2 == 0 ? 220 : 600, turn + 1));
            turn++;
        }
        root.put("model", ALIAS);
        root.put("max_tokens", 1024);
        root.put("stream", true);
        root.putObject("stream_options").put("include_usage", true);
        root.put("temperature", 0.7);
        return root;
    }

    /** The gateway: peek (routing needs it anyway), then splice the upstream name in. */
    @Benchmark
    public int peekAndSplice() {
        ByteBuf out = splice();
        try {
            return out.readableBytes();
        } finally {
            out.release();
        }
    }

    private ByteBuf splice() {
        RequestPeek peek = RequestPeek.peek(Endpoint.CHAT_COMPLETIONS, request, false);
        if (!ALIAS.equals(peek.model())) {
            throw new IllegalStateException("peek found " + peek.model());
        }
        return BodySplicer.replaceString(ALLOC, request, peek.modelStart(), peek.modelEnd(), UPSTREAM);
    }

    /** Baseline: copy out, parse to a tree, route on its model, set the upstream name, serialise. */
    @Benchmark
    public int treeRewriteBaseline() throws Exception {
        ByteBuf out = Unpooled.wrappedBuffer(rewriteTree());
        try {
            return out.readableBytes();
        } finally {
            out.release();
        }
    }

    private byte[] rewriteTree() throws Exception {
        byte[] copy = new byte[request.readableBytes()];
        request.getBytes(request.readerIndex(), copy);
        ObjectNode tree = (ObjectNode) MAPPER.readTree(copy);
        if (!ALIAS.equals(tree.path("model").asText())) {
            throw new IllegalStateException("tree found " + tree.path("model"));
        }
        tree.put("model", UPSTREAM);
        return MAPPER.writeValueAsBytes(tree);
    }
}
