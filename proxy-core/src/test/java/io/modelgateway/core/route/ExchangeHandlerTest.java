package io.modelgateway.core.route;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.auth.KeyAuthenticator;
import io.modelgateway.core.server.GatewayContext;
import io.modelgateway.core.server.GatewayRequest;
import io.modelgateway.core.testing.Embedded;
import io.modelgateway.core.testing.TestGateway;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The terminal handler with the in-process simulator as provider, on an EmbeddedChannel. */
class ExchangeHandlerTest {
    private static final String CHAT = "{\"model\":\"sim-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    private GatewayContext context;
    private EmbeddedChannel ch;

    @BeforeEach
    void setUp() throws Exception {
        context = Embedded.context();
        ch = new EmbeddedChannel(new KeyAuthenticator(context), new ExchangeHandler(context));
    }

    @AfterEach
    void tearDown() {
        assertThat(ch.finishAndReleaseAll()).isFalse();
        context.pools().close();
    }

    private GatewayRequest request(Endpoint e, String body, String... headers) {
        String[] all = new String[headers.length + 2];
        all[0] = "authorization";
        all[1] = "Bearer " + TestGateway.KEY;
        System.arraycopy(headers, 0, all, 2, headers.length);
        return new GatewayRequest(Embedded.request(HttpMethod.POST, e.gatewayPath(), body, all), e, e.style(),
                "req_x", true, 0);
    }

    @Test
    void chat_nonStream_answersWithUpstreamModelAndReleasesRequest() {
        GatewayRequest req = request(Endpoint.CHAT_COMPLETIONS, CHAT);
        ch.writeInbound(req);
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(200);
        assertThat(r.headers().get("x-request-id")).isEqualTo("req_x");
        assertThat(Embedded.body(r)).contains("\"object\":\"chat.completion\"").contains("\"model\":\"sim-chat-1\"");
        assertThat(req.refCnt()).isZero();
    }

    @Test
    void chat_stream_isHeadEventsThenLastContent() {
        ch.writeInbound(request(Endpoint.CHAT_COMPLETIONS, CHAT.replace("{\"model\"", "{\"stream\":true,\"model\"")));
        HttpResponse head = ch.readOutbound();
        assertThat(head.headers().get("content-type")).startsWith("text/event-stream");
        StringBuilder body = new StringBuilder();
        Object o;
        boolean last = false;
        int events = 0;
        while ((o = ch.readOutbound()) != null) {
            HttpContent c = (HttpContent) o;
            body.append(c.content().toString(StandardCharsets.UTF_8));
            last = c instanceof LastHttpContent;
            events++;
            c.release();
        }
        assertThat(last).isTrue();
        assertThat(events).isGreaterThan(3);
        assertThat(body.toString()).startsWith("data: {").endsWith("data: [DONE]\n\n");
    }

    @Test
    void unknownModel_is404() {
        ch.writeInbound(request(Endpoint.CHAT_COMPLETIONS, CHAT.replace("sim-chat", "nope")));
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(404);
        r.release();
    }

    @Test
    void missingVersionHeader_onMessages_is400() {
        ch.writeInbound(request(Endpoint.MESSAGES, "{\"model\":\"sim-chat\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"));
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(400);
        assertThat(Embedded.body(r)).contains("anthropic-version");
    }

    private static final String MESSAGES = "{\"model\":\"sim-chat\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}";

    @Test
    void missingVersionHeader_messageNamesTheAlias() {
        ch.writeInbound(request(Endpoint.MESSAGES, MESSAGES));
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(400);
        assertThat(Embedded.body(r)).contains("\"type\":\"invalid_request_error\"")
                .contains("anthropic-version: header is required (vendor-version is accepted as an alias)");
    }

    @Test
    void vendorVersionAlone_isAcceptedAsTheVersion() {
        GatewayRequest req = request(Endpoint.MESSAGES, MESSAGES, "vendor-version", "2023-06-01");
        ch.writeInbound(req);
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(200);
        assertThat(Embedded.body(r)).contains("\"type\":\"message\"");
    }

    @Test
    void vendorVersion_isValidatedLikeAnthropicVersion() {
        ch.writeInbound(request(Endpoint.MESSAGES, MESSAGES, "vendor-version", "2023-01-01"));
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(400);
        assertThat(Embedded.body(r)).contains("vendor-version: '2023-01-01' is not a supported version");
    }

    @Test
    void versionAndAliasThatDiffer_is400_sameValueTwicePasses() {
        ch.writeInbound(request(Endpoint.MESSAGES, MESSAGES, "anthropic-version", "2023-06-01",
                "vendor-version", "2026-10-21"));
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(400);
        assertThat(Embedded.body(r)).contains("anthropic-version and vendor-version carry different versions");

        ch.writeInbound(request(Endpoint.MESSAGES, MESSAGES, "anthropic-version", "2023-06-01",
                "vendor-version", "2023-06-01"));
        r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(200);
        r.release();
    }

    @Test
    void twoDifferentAnthropicVersionLines_is400() {
        GatewayRequest req = request(Endpoint.MESSAGES, MESSAGES);
        req.headers().add("anthropic-version", "2023-06-01").add("anthropic-version", "2026-10-21");
        ch.writeInbound(req);
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(400);
        assertThat(Embedded.body(r)).contains("two anthropic-version headers carry different versions");
    }

    @Test
    void duplicateModelKey_is400AndNothingIsServed() {
        // last key wins in the peek; an upstream that takes the first would serve the other model
        GatewayRequest req = request(Endpoint.CHAT_COMPLETIONS,
                "{\"model\":\"sim-embed\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"model\":\"sim-chat\"}");
        ch.writeInbound(req);
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(400);
        assertThat(Embedded.body(r)).contains("\"param\":\"model\"").contains("\"code\":\"duplicate_key\"");
        assertThat(req.refCnt()).isZero();
    }

    @Test
    void pipelinedRequests_areAnsweredInOrder() {
        ch.writeInbound(request(Endpoint.CHAT_COMPLETIONS, CHAT, "x-sim-output-tokens", "3"),
                request(Endpoint.EMBEDDINGS, "{\"model\":\"sim-embed\",\"input\":\"a\"}"));
        FullHttpResponse first = ch.readOutbound();
        FullHttpResponse second = ch.readOutbound();
        assertThat(Embedded.body(first)).contains("chat.completion");
        assertThat(Embedded.body(second)).contains("\"object\":\"list\"");
    }

    @Test
    void clientClosesMidStream_pacedStreamStopsWithoutLeaks() {
        ch.writeInbound(request(Endpoint.CHAT_COMPLETIONS, CHAT.replace("{\"model\"", "{\"stream\":true,\"model\""),
                "x-sim-tps", "5", "x-sim-output-tokens", "50"));
        Object o;
        while ((o = ch.readOutbound()) != null) {
            io.netty.util.ReferenceCountUtil.release(o);
        }
        ch.close();
        ch.runPendingTasks();
        assertThat((Object) ch.readOutbound()).isNull();
    }
}
