package io.modelgateway.core.server;

import io.modelgateway.core.exchange.GatewayRequest;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.testing.Embedded;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RequestRouterTest {
    private GatewayContext context;
    private EmbeddedChannel ch;

    @BeforeEach
    void setUp() throws Exception {
        context = Embedded.context();
        ch = new EmbeddedChannel(new RequestRouter(context::config, context::ready, context.exchanges()));
    }

    @AfterEach
    void tearDown() {
        assertThat(ch.finishAndReleaseAll()).isFalse();
        context.pools().close();
    }

    @Test
    void health_answersOkAndReleasesRequest() {
        FullHttpRequest req = Embedded.request(HttpMethod.GET, "/health", "");
        ch.writeInbound(req);
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(200);
        assertThat(r.headers().get("x-request-id")).startsWith("req_");
        assertThat(Embedded.body(r)).isEqualTo("{\"status\":\"ok\"}");
        assertThat(req.refCnt()).isZero();
    }

    /** Claude Code probes the gateway's base URL with HEAD at start: 200, no body, no key. */
    @ParameterizedTest
    @ValueSource(strings = {"/", "/api"})
    void headProbe_ofTheBaseUrl_is200WithNoBody(String path) {
        FullHttpRequest req = Embedded.request(HttpMethod.HEAD, path, "");
        ch.writeInbound(req);
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(200);
        assertThat(r.content().readableBytes()).isZero();
        assertThat(r.headers().getInt("content-length")).isZero();
        assertThat(req.refCnt()).isZero();
        r.release();
    }

    @Test
    void getOfTheBaseUrl_isStill404() {
        ch.writeInbound(Embedded.request(HttpMethod.GET, "/", ""));
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(404);
        r.release();
    }

    @Test
    void ready_whenDraining_is503() {
        context.ready(false);
        ch.writeInbound(Embedded.request(HttpMethod.GET, "/ready", ""));
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(503);
        r.release();
    }

    @Test
    void apiPost_isForwardedAsGatewayRequest() {
        ch.writeInbound(Embedded.request(HttpMethod.POST, "/api/v1/messages?beta=true", "{}"));
        GatewayRequest gr = ch.readInbound();
        assertThat(gr.endpoint()).isEqualTo(Endpoint.MESSAGES);
        assertThat(gr.style()).isEqualTo(ApiStyle.ANTHROPIC);
        assertThat(gr.requestId()).matches("req_[0-9A-Za-z]{24}");
        assertThat(gr.refCnt()).isEqualTo(1);
        gr.release();
        assertThat((Object) ch.readOutbound()).isNull();
    }

    @Test
    void unknownPath_is404OpenAiStyle() {
        FullHttpRequest req = Embedded.request(HttpMethod.POST, "/v1/whatever", "{}");
        ch.writeInbound(req);
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(404);
        assertThat(Embedded.body(r)).contains("\"code\":\"not_found\"");
        assertThat(req.refCnt()).isZero();
    }

    @Test
    void wrongMethodOnMessages_is405AnthropicStyle() {
        ch.writeInbound(Embedded.request(HttpMethod.PUT, "/api/v1/messages", "{}"));
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(405);
        assertThat(Embedded.body(r)).startsWith("{\"type\":\"error\"");
    }

    @Test
    void wrongMethod_405CarriesAllow() {
        ch.writeInbound(Embedded.request(HttpMethod.GET, "/api/v1/embeddings", ""));
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(405);
        assertThat(r.headers().get("allow")).isEqualTo("POST");
        r.release();
        ch.writeInbound(Embedded.request(HttpMethod.DELETE, "/ready", ""));
        r = ch.readOutbound();
        assertThat(r.headers().get("allow")).isEqualTo("GET, HEAD");
        r.release();
    }

    @Test
    void headRefusedByTheValidator_isAnsweredWithItsStatusInThePathsStyleAndCloses() {
        FullHttpRequest req = Embedded.request(HttpMethod.POST, "/api/v1/messages", "{}");
        req.setProtocolVersion(io.netty.handler.codec.http.HttpVersion.valueOf("HTTP/1.2"));
        assertThat(RequestHeadValidator.check(req)).isNotNull();
        req.setDecoderResult(DecoderResult.failure(new RequestHeadValidator.Refusal(RequestHeadValidator.check(req))));
        ch.writeInbound(req);
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(505);
        assertThat(Embedded.body(r)).startsWith("{\"type\":\"error\"");
        ch.runPendingTasks();
        assertThat(ch.isOpen()).isFalse();
    }

    @Test
    void decoderFailure_is400AndCloses() {
        FullHttpRequest req = Embedded.request(HttpMethod.GET, "/bad", "");
        req.setDecoderResult(DecoderResult.failure(new IllegalArgumentException("bad")));
        ch.writeInbound(req);
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(400);
        r.release();
        ch.runPendingTasks();
        assertThat(ch.isOpen()).isFalse();
    }
}
