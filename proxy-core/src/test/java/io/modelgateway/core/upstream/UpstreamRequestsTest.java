package io.modelgateway.core.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.json.RequestPeek;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.config.ProviderType;
import io.modelgateway.core.exchange.GatewayRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpVersion;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The upstream request as bytes ({@link UpstreamRequests#request}), read back by Netty's own request decoder: the
 * request line, each header once (a later one replacing an earlier one of its name), the body's length and bytes,
 * the body in the head's buffer or after it, and nothing carried from one request into the next.
 */
class UpstreamRequestsTest {
    private final List<Object> toRelease = new ArrayList<>();

    @AfterEach
    void release() {
        for (Object o : toRelease) {
            io.netty.util.ReferenceCountUtil.release(o);
        }
    }

    private static ProviderConfig openai(Map<String, String> headers, List<String> forward) {
        return new ProviderConfig("p", ProviderType.OPENAI, URI.create("http://127.0.0.1:9090/v1"), "sk-up", headers,
                forward, 1000, null, null, false);
    }

    private GatewayRequest request(String json, Map<String, String> clientHeaders) {
        ByteBuf body = Unpooled.directBuffer().writeBytes(json.getBytes(StandardCharsets.UTF_8));
        FullHttpRequest http = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST,
                "/api/v1/chat/completions", body);
        http.headers().set("content-type", "application/json").set("authorization", "Bearer sk-gateway");
        clientHeaders.forEach(http.headers()::set);
        GatewayRequest r = new GatewayRequest(http, Endpoint.CHAT_COMPLETIONS, ApiStyle.OPENAI, "req-7", true, 0L);
        r.peek(RequestPeek.peek(Endpoint.CHAT_COMPLETIONS, body, true));
        toRelease.add(http);
        return r;
    }

    /** What Netty's decoder makes of {@code wire}, whole. */
    private FullHttpRequest decode(ByteBuf... wire) {
        EmbeddedChannel ch = new EmbeddedChannel(new HttpRequestDecoder(), new HttpObjectAggregator(1 << 20));
        for (ByteBuf b : wire) {
            ch.writeInbound(b);
        }
        FullHttpRequest got = ch.readInbound();
        assertThat(got).isNotNull();
        assertThat(got.decoderResult().isSuccess()).isTrue();
        assertThat((Object) ch.readInbound()).isNull();
        ch.finishAndReleaseAll();
        toRelease.add(got);
        return got;
    }

    @Test
    void aSmallBody_travelsInTheHeadsBuffer_andReadsBackAsTheRequestItWas() {
        String json = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"héllo\"}]}";
        GatewayRequest r = request(json, Map.of("x-team", "blue"));
        ProviderConfig p = openai(Map.of("User-Agent", "my-app/2", "X-Extra", "yes"), List.of("x-team"));
        ByteBuf body = r.http().content();
        assertThat(UpstreamRequests.bodyInHead(body)).isTrue();
        int readerBefore = body.readerIndex();

        FullHttpRequest got = decode(UpstreamRequests.request(ByteBufAllocator.DEFAULT, new UpstreamTarget(p), p, r,
                "gpt-4o", body));

        assertThat(got.method()).isEqualTo(HttpMethod.POST);
        assertThat(got.uri()).isEqualTo("/v1/chat/completions");
        assertThat(got.headers().getAll("host")).containsExactly("127.0.0.1:9090");
        assertThat(got.headers().getAll("content-type")).containsExactly("application/json");
        assertThat(got.headers().getAll("user-agent")).containsExactly("my-app/2"); // the extra replaced ours
        assertThat(got.headers().getAll("x-extra")).containsExactly("yes");
        assertThat(got.headers().getAll("x-team")).containsExactly("blue");
        assertThat(got.headers().getAll("x-request-id")).containsExactly("req-7");
        assertThat(got.headers().getAll("authorization")).containsExactly("Bearer sk-up"); // never the caller's
        byte[] sent = json.getBytes(StandardCharsets.UTF_8);
        assertThat(got.headers().getAll("content-length")).containsExactly(Integer.toString(sent.length));
        assertThat(got.content().toString(StandardCharsets.UTF_8)).isEqualTo(json);
        assertThat(got.headers().size()).isEqualTo(8);
        assertThat(body.readerIndex()).isEqualTo(readerBefore); // the body stays whole for a retry
    }

    @Test
    void aLargeBody_followsTheHead_asADuplicateOfItsBytes() {
        String json = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"" + "x".repeat(10_000) + "\"}]}";
        GatewayRequest r = request(json, Map.of());
        ProviderConfig p = openai(Map.of(), List.of());
        ByteBuf body = r.http().content();
        assertThat(UpstreamRequests.bodyInHead(body)).isFalse();

        ByteBuf head = UpstreamRequests.request(ByteBufAllocator.DEFAULT, new UpstreamTarget(p), p, r, "gpt-4o", body);
        assertThat(head.readableBytes()).isLessThan(300);
        FullHttpRequest got = decode(head, UpstreamRequests.body(body));

        assertThat(got.headers().get("content-length")).isEqualTo(Integer.toString(json.length()));
        assertThat(got.content().toString(StandardCharsets.UTF_8)).isEqualTo(json);
        assertThat(body.readerIndex()).isZero(); // the duplicate was read, not the body
    }

    @Test
    void aRequestCarriesNothingOfTheOneBuiltBeforeIt_onTheSameThread() {
        ProviderConfig first = openai(Map.of("X-Only-First", "1"), List.of("x-team"));
        ProviderConfig second = openai(Map.of(), List.of());
        GatewayRequest a = request("{\"model\":\"m\",\"messages\":[]}", Map.of("x-team", "blue"));
        GatewayRequest b = request("{\"model\":\"n\",\"messages\":[]}", Map.of("x-team", "red"));

        decode(UpstreamRequests.request(ByteBufAllocator.DEFAULT, new UpstreamTarget(first), first, a, "m",
                a.http().content()));
        FullHttpRequest got = decode(UpstreamRequests.request(ByteBufAllocator.DEFAULT, new UpstreamTarget(second),
                second, b, "n", b.http().content()));

        assertThat(got.headers().contains("x-only-first")).isFalse();
        assertThat(got.headers().contains("x-team")).isFalse();
        assertThat(got.headers().size()).isEqualTo(6);
        assertThat(got.content().toString(StandardCharsets.UTF_8)).isEqualTo("{\"model\":\"n\",\"messages\":[]}");
    }

    @Test
    void theConnectionsEncoder_letsTheBytesPass_andStillEncodesARequestBuiltAsAMessage() {
        EmbeddedChannel ch = new EmbeddedChannel(new UpstreamRequestEncoder());
        ByteBuf bytes = Unpooled.copiedBuffer("POST / HTTP/1.1\r\n\r\n", StandardCharsets.US_ASCII);
        assertThat(ch.writeOutbound(bytes)).isTrue();
        ByteBuf out = ch.readOutbound();
        assertThat(out).isSameAs(bytes);
        out.release();

        FullHttpRequest signed = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/model/x/invoke",
                Unpooled.copiedBuffer("{}", StandardCharsets.US_ASCII));
        signed.headers().set("content-length", 2);
        assertThat(ch.writeOutbound(signed)).isTrue();
        StringBuilder wire = new StringBuilder();
        for (ByteBuf b; (b = ch.readOutbound()) != null; b.release()) {
            wire.append(b.toString(StandardCharsets.US_ASCII));
        }
        assertThat(wire.toString()).isEqualTo("POST /model/x/invoke HTTP/1.1\r\ncontent-length: 2\r\n\r\n{}");
        assertThat(ch.finish()).isFalse();
    }
}
