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
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The request peek (streaming parse that picks out routing fields from a direct buffer) against the
 * baseline it replaces: copying the body out and parsing it into a Jackson tree.
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

    @Setup
    public void setUp() {
        StringBuilder sb = new StringBuilder("{\"model\":\"sim-chat\",\"stream\":true,\"max_tokens\":256,\"messages\":[");
        for (int i = 0; i < 8; i++) {
            sb.append(i == 0 ? "" : ",").append("{\"role\":\"").append(i % 2 == 0 ? "user" : "assistant")
                    .append("\",\"content\":\"").append("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(6))
                    .append("\"}");
        }
        sb.append("],\"temperature\":0.7}");
        byte[] bytes = sb.toString().getBytes(StandardCharsets.UTF_8);
        body = Unpooled.directBuffer(bytes.length).writeBytes(bytes);
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
