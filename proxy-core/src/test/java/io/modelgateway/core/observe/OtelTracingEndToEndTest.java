package io.modelgateway.core.observe;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import io.modelgateway.core.testing.ScriptedUpstream;
import io.modelgateway.core.testing.TestGateway;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.Status;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Traces exported by the gateway to an OTLP/HTTP receiver run here: a small Netty HTTP server that decodes each
 * {@code ExportTraceServiceRequest} with the protobuf classes of opentelemetry-proto (an implementation independent of
 * the SDK that encodes them). Checks the spans' names, kinds, GenAI attributes and parentage: the caller's
 * {@code traceparent} is the exchange span's parent, each upstream attempt is a child span of the exchange, and the
 * upstream request carries the attempt's {@code traceparent}.
 */
class OtelTracingEndToEndTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    static final String CALLER_SPAN = "00f067aa0ba902b7";
    static final String ANSWER = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"m-up\","
            + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hello\"},"
            + "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":7,\"total_tokens\":19}}";

    private final Receiver receiver = new Receiver();
    private ScriptedUpstream upstream;
    private TestGateway gw;

    @AfterEach
    void stop() throws Exception {
        if (gw != null) {
            gw.close();
        }
        if (upstream != null) {
            upstream.close();
        }
        receiver.close();
    }

    private void start(String telemetry) throws Exception {
        AtomicInteger n = new AtomicInteger();
        // The first request of all fails with a 503, so that the exchange has a failed attempt and a retry.
        upstream = new ScriptedUpstream(r -> n.getAndIncrement() == 0
                ? ScriptedUpstream.Script.json(503, "{\"error\":{\"message\":\"busy\",\"type\":\"server_error\"}}")
                : ScriptedUpstream.Script.json(200, ANSWER));
        gw = TestGateway.start(telemetry + """
                keys:
                  - name: team-a
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                providers:
                  up: {type: openai, base_url: "%s/v1", api_key: sk-up, cooldown: off}
                  sim: {type: simulator}
                models:
                  traced:
                    retries: {max: 1, backoff_ms: 1, max_backoff_ms: 5}
                    deployments: [{provider: up, model: m-up}]
                  sim-chat:
                    deployments: [{provider: sim, model: sim-chat-1}]
                """.formatted(upstream.baseUrl()));
    }

    private String telemetry(double ratio) {
        return "telemetry:\n  otlp_endpoint: http://127.0.0.1:" + receiver.port() + "/v1/traces\n"
                + "  sampling_ratio: " + ratio + "\n  service_name: gw-under-test\n";
    }

    @Test
    void exchangeAndAttemptSpans_withGenAiAttributes_childrenOfTheCallersTraceparent() throws Exception {
        start(telemetry(1.0));
        HttpResponse<String> r = gw.call("/api/v1/chat/completions",
                "{\"model\":\"traced\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
                "traceparent", "00-" + TRACE_ID + "-" + CALLER_SPAN + "-01");
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode usage = JSON.readTree(r.body()).get("usage");
        gw.close(); // exports what is queued
        gw = null;

        List<Span> spans = receiver.spans();
        assertThat(spans).hasSize(3);
        assertThat(receiver.resourceAttributes().get("service.name")).isEqualTo("gw-under-test");
        Span exchange = only(spans, Span.SpanKind.SPAN_KIND_SERVER);
        assertThat(hex(exchange.getTraceId())).isEqualTo(TRACE_ID);
        assertThat(hex(exchange.getParentSpanId())).isEqualTo(CALLER_SPAN);
        assertThat(exchange.getName()).isEqualTo("chat traced");
        Map<String, Object> ex = attributes(exchange);
        assertThat(ex).containsEntry("gen_ai.operation.name", "chat")
                .containsEntry("gen_ai.provider.name", "openai")
                .containsEntry("gen_ai.request.model", "traced")
                .containsEntry("gen_ai.response.model", "m-up")
                .containsEntry("gen_ai.usage.input_tokens", usage.get("prompt_tokens").asLong())
                .containsEntry("gen_ai.usage.output_tokens", usage.get("completion_tokens").asLong())
                .containsEntry("http.response.status_code", 200L)
                .containsEntry("model_gateway.key", "team-a")
                .containsEntry("model_gateway.attempts", 2L)
                .doesNotContainKey("error.type");

        List<Span> attempts = spans.stream().filter(s -> s.getKind() == Span.SpanKind.SPAN_KIND_CLIENT).toList();
        assertThat(attempts).hasSize(2);
        for (Span a : attempts) {
            assertThat(a.getTraceId()).isEqualTo(exchange.getTraceId());
            assertThat(a.getParentSpanId()).as("an attempt is a child of the exchange").isEqualTo(exchange.getSpanId());
            assertThat(a.getName()).isEqualTo("chat m-up");
            assertThat(attributes(a)).containsEntry("gen_ai.operation.name", "chat")
                    .containsEntry("gen_ai.provider.name", "openai")
                    .containsEntry("gen_ai.request.model", "m-up")
                    .containsEntry("server.address", "127.0.0.1")
                    .containsEntry("server.port", (long) upstream.port());
        }
        Span failed = attempts.stream().filter(a -> a.getStatus().getCode() == Status.StatusCode.STATUS_CODE_ERROR)
                .findFirst().orElseThrow();
        assertThat(attributes(failed)).containsKey("error.type");
        Span served = attempts.stream().filter(a -> a != failed).findFirst().orElseThrow();
        assertThat(attributes(served)).containsEntry("gen_ai.usage.output_tokens",
                usage.get("completion_tokens").asLong()).doesNotContainKey("error.type");
        assertThat(failed.getEndTimeUnixNano()).isLessThanOrEqualTo(served.getStartTimeUnixNano());

        // Each upstream request carried its own attempt's traceparent.
        assertThat(upstream.received).hasSize(2);
        for (int i = 0; i < 2; i++) {
            String tp = upstream.received.get(i).headers().get("traceparent");
            assertThat(tp).matches("00-" + TRACE_ID + "-[0-9a-f]{16}-01");
            String parent = tp.substring(36, 52);
            assertThat(parent).isEqualTo(hex((i == 0 ? failed : served).getSpanId()));
        }
    }

    @Test
    void samplingRatioZero_aNewTraceIsNotRecorded_butASampledCallersIs_andStatusOfARefusal() throws Exception {
        start(telemetry(0));
        assertThat(gw.call("/api/v1/chat/completions",
                "{\"model\":\"sim-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}").statusCode())
                .isEqualTo(200);
        // A model the key may not see: answered by the gateway, still traced when the caller's trace is sampled.
        HttpResponse<String> r = gw.call("/api/v1/chat/completions",
                "{\"model\":\"nope\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
                "traceparent", "00-" + TRACE_ID + "-" + CALLER_SPAN + "-01");
        assertThat(r.statusCode()).isEqualTo(404);
        gw.close();
        gw = null;

        List<Span> spans = receiver.spans();
        assertThat(spans).hasSize(1);
        Span s = spans.get(0);
        assertThat(hex(s.getTraceId())).isEqualTo(TRACE_ID);
        assertThat(s.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_SERVER);
        assertThat(attributes(s)).containsEntry("error.type", "404").containsEntry("http.response.status_code", 404L);
        assertThat(s.getStatus().getCode()).isEqualTo(Status.StatusCode.STATUS_CODE_ERROR);
    }

    @Test
    void simulatorAttempt_isTracedWithoutServerAddress() throws Exception {
        start(telemetry(1.0));
        assertThat(gw.call("/api/v1/messages", "{\"model\":\"sim-chat\",\"max_tokens\":5,"
                        + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", "traceparent",
                "00-" + TRACE_ID + "-" + CALLER_SPAN + "-01").statusCode()).isEqualTo(200);
        gw.close();
        gw = null;
        List<Span> spans = receiver.spans();
        assertThat(spans).hasSize(2);
        Span attempt = only(spans, Span.SpanKind.SPAN_KIND_CLIENT);
        assertThat(attributes(attempt)).containsEntry("gen_ai.provider.name", "simulator")
                .doesNotContainKey("server.address");
        assertThat(attempt.getParentSpanId()).isEqualTo(only(spans, Span.SpanKind.SPAN_KIND_SERVER).getSpanId());
    }

    @Test
    void off_noTelemetryBlock_nothingReachesTheUpstream() throws Exception {
        start("");
        assertThat(gw.call("/api/v1/chat/completions",
                "{\"model\":\"traced\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
                "traceparent", "00-" + TRACE_ID + "-" + CALLER_SPAN + "-01").statusCode()).isEqualTo(200);
        assertThat(upstream.received).isNotEmpty().allSatisfy(rec ->
                assertThat(rec.headers()).doesNotContainKey("traceparent"));
        gw.close();
        gw = null;
        assertThat(receiver.requests.get()).isZero();
    }

    private static Span only(List<Span> spans, Span.SpanKind kind) {
        List<Span> of = spans.stream().filter(s -> s.getKind() == kind).toList();
        assertThat(of).hasSize(1);
        return of.get(0);
    }

    private static String hex(ByteString b) {
        return HexFormat.of().formatHex(b.toByteArray());
    }

    static Map<String, Object> attributes(Span s) {
        return toMap(s.getAttributesList());
    }

    private static Map<String, Object> toMap(List<KeyValue> kvs) {
        return kvs.stream().collect(Collectors.toMap(KeyValue::getKey, kv -> value(kv.getValue())));
    }

    private static Object value(AnyValue v) {
        return switch (v.getValueCase()) {
            case STRING_VALUE -> v.getStringValue();
            case INT_VALUE -> v.getIntValue();
            case DOUBLE_VALUE -> v.getDoubleValue();
            case BOOL_VALUE -> v.getBoolValue();
            default -> v.toString();
        };
    }

    /** An OTLP/HTTP (protobuf) trace receiver on 127.0.0.1: decodes every export, answers 200. */
    static final class Receiver implements AutoCloseable {
        private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        private final Channel server;
        final List<ExportTraceServiceRequest> exports = new CopyOnWriteArrayList<>();
        final AtomicInteger requests = new AtomicInteger();
        final List<String> problems = new CopyOnWriteArrayList<>();

        Receiver() {
            try {
                server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                        .childHandler(new ChannelInitializer<SocketChannel>() {
                            @Override
                            protected void initChannel(SocketChannel ch) {
                                ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(16 << 20),
                                        new Handler());
                            }
                        }).bind("127.0.0.1", 0).sync().channel();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }

        int port() {
            return ((InetSocketAddress) server.localAddress()).getPort();
        }

        List<Span> spans() {
            assertThat(problems).isEmpty();
            return exports.stream().flatMap(e -> e.getResourceSpansList().stream())
                    .flatMap(rs -> rs.getScopeSpansList().stream()).flatMap(ss -> ss.getSpansList().stream()).toList();
        }

        Map<String, Object> resourceAttributes() {
            Resource r = exports.get(0).getResourceSpans(0).getResource();
            return toMap(r.getAttributesList());
        }

        private final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
            @Override
            protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
                requests.incrementAndGet();
                if (!req.uri().equals("/v1/traces") || !"application/x-protobuf".equals(
                        req.headers().get(HttpHeaderNames.CONTENT_TYPE))) {
                    problems.add(req.method() + " " + req.uri() + " " + req.headers().get(HttpHeaderNames.CONTENT_TYPE));
                }
                try {
                    exports.add(ExportTraceServiceRequest.parseFrom(ByteBufUtil.getBytes(req.content())));
                } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                    problems.add("undecodable export: " + e.getMessage());
                }
                byte[] body = ExportTraceServiceResponse.getDefaultInstance().toByteArray();
                DefaultFullHttpResponse resp = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                        Unpooled.wrappedBuffer(body));
                resp.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/x-protobuf")
                        .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
                ctx.writeAndFlush(resp);
            }
        }

        @Override
        public void close() {
            server.close().syncUninterruptibly();
            group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
        }
    }
}
