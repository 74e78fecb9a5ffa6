package io.modelgateway.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.json.RequestPeek;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
 * The request peek (streaming parse that picks out routing fields from a direct buffer) against the
 * baseline it replaces: copying the body out and parsing it into a Jackson tree. Two bodies: {@code chat}, a
 * ~3 KB conversation with five top-level members, and {@code wide}, a short request with 20 top-level members
 * (every sampling option an SDK can send), where a per-member cost such as the duplicate-key check shows most.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class RequestPeekBenchmark {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private ByteBuf body;

    @Param({"chat", "wide"})
    public String shape;

    @Setup
    public void setUp() {
        byte[] bytes = (shape.equals("wide") ? wide() : chat()).getBytes(StandardCharsets.UTF_8);
        body = Unpooled.directBuffer(bytes.length).writeBytes(bytes);
        if (!RequestPeek.peek(Endpoint.CHAT_COMPLETIONS, body, false).ok()) {
            throw new IllegalStateException("the benchmark body must pass the peek");
        }
    }

    private static String wide() {
        return "{\"model\":\"sim-chat\",\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},"
                + "{\"role\":\"user\",\"content\":\"Hello there!\"}],\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true},\"max_completion_tokens\":256,\"temperature\":0.7,"
                + "\"top_p\":0.9,\"n\":1,\"presence_penalty\":0,\"frequency_penalty\":0.1,\"stop\":[\"END\"],"
                + "\"seed\":42,\"user\":\"user-1234\",\"logprobs\":false,\"parallel_tool_calls\":true,"
                + "\"tool_choice\":\"auto\",\"response_format\":{\"type\":\"text\"},\"service_tier\":\"auto\","
                + "\"store\":false,\"metadata\":{\"team\":\"search\"}}";
    }

    private static String chat() {
        StringBuilder sb = new StringBuilder("{\"model\":\"sim-chat\",\"stream\":true,\"max_tokens\":256,\"messages\":[");
        for (int i = 0; i < 8; i++) {
            sb.append(i == 0 ? "" : ",").append("{\"role\":\"").append(i % 2 == 0 ? "user" : "assistant")
                    .append("\",\"content\":\"").append("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(6))
                    .append("\"}");
        }
        sb.append("],\"temperature\":0.7}");
        return sb.toString();
    }

    @TearDown
    public void tearDown() {
        body.release();
    }

    @Benchmark
    public Object peek() {
        return RequestPeek.peek(Endpoint.CHAT_COMPLETIONS, body, false).model();
    }

    @Benchmark
    public Object treeParseBaseline() throws Exception {
        byte[] copy = new byte[body.readableBytes()];
        body.getBytes(body.readerIndex(), copy);
        JsonNode tree = MAPPER.readTree(copy);
        return tree.path("model").asText();
    }
}
