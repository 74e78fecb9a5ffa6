package io.modelgateway.core.upstream;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.json.RequestPeek;
import io.modelgateway.core.config.AzureSettings;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.config.ProviderType;
import io.modelgateway.core.exchange.GatewayRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
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
 * The upstream request an attempt builds ({@code UpstreamRequests.head}: path, host, credential, forwarded and extra
 * headers, written with the body as one pooled buffer), per provider kind: {@code openai} (the plain pass-through, the
 * baseline), {@code azure} (the deployment path, looked up per deployment: {@code /openai/deployments/{d}/chat/
 * completions?api-version=…}, the {@code api-key} header) and {@code azureV1} (the fixed {@code /openai/v1/…} path).
 * Azure OpenAI adds no signing and no stream decoding, so this lookup is all it adds per request; run with
 * {@code -prof gc} to see the bytes allocated. In {@code io.modelgateway.core.upstream} because the builder is
 * package-private.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class UpstreamRequestBenchmark {
    @Param({"openai", "azure", "azureV1"})
    public String kind;

    private UpstreamTarget target;
    private ProviderConfig provider;
    private GatewayRequest request;
    private ByteBuf body;

    @Setup(Level.Trial)
    public void setUp() {
        String key = "5c1f0e9a7b3d4e2f8a6c0b1d9e7f3a2c";
        provider = switch (kind) {
            case "openai" -> new ProviderConfig("p", ProviderType.OPENAI, URI.create("https://api.openai.com/v1"),
                    key, Map.of(), List.of(), 1000, null, "max_completion_tokens", false);
            case "azure", "azureV1" -> new ProviderConfig("p", ProviderType.AZURE_OPENAI,
                    URI.create("https://my-resource.openai.azure.com"), key, Map.of(), List.of(), 1000, null,
                    "max_completion_tokens", false, null, null, null, null,
                    new AzureSettings(kind.equals("azure") ? "2024-10-21" : null, AzureSettings.Credential.API_KEY));
            default -> throw new IllegalArgumentException(kind);
        };
        target = new UpstreamTarget(provider);
        byte[] json = ("{\"model\":\"gpt-4o-prod\",\"messages\":[{\"role\":\"user\",\"content\":\""
                + "x".repeat(1600) + "\"}]}").getBytes(StandardCharsets.UTF_8);
        body = Unpooled.directBuffer(json.length).writeBytes(json);
        FullHttpRequest http = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST,
                "/api/v1/chat/completions", body.retainedDuplicate());
        http.headers().set("content-type", "application/json").set("authorization", "Bearer sk-gateway")
                .setInt("content-length", json.length);
        request = new GatewayRequest(http, Endpoint.CHAT_COMPLETIONS, ApiStyle.OPENAI, "req-1", true, 0L);
        request.peek(RequestPeek.peek(Endpoint.CHAT_COMPLETIONS, body, true));
        ByteBuf check = UpstreamRequests.request(ByteBufAllocator.DEFAULT, target, provider, request, "gpt-4o-prod",
                body);
        String expected = switch (kind) {
            case "openai" -> "/v1/chat/completions";
            case "azure" -> "/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21";
            default -> "/openai/v1/chat/completions";
        };
        String line = check.toString(StandardCharsets.US_ASCII);
        check.release();
        if (!line.startsWith("POST " + expected + " HTTP/1.1\r\n")) {
            throw new IllegalStateException(line);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        request.http().release();
        body.release();
    }

    @Benchmark
    public int build() {
        ByteBuf out = UpstreamRequests.request(ByteBufAllocator.DEFAULT, target, provider, request, "gpt-4o-prod",
                body);
        int n = out.readableBytes();
        out.release();
        return n;
    }
}
