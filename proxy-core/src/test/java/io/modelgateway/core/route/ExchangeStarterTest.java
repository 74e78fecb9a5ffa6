package io.modelgateway.core.route;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.server.GatewayContext;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.testing.Embedded;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The terminal step with the in-process simulator as provider, behind the other request steps, on an
 * EmbeddedChannel: the exchange starts, answers, ends and releases its request; a client that leaves cancels it.
 */
class ExchangeStarterTest {
    private static final String CHAT = "{\"model\":\"sim-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    private GatewayContext context;
    private EmbeddedChannel ch;

    @BeforeEach
    void setUp() throws Exception {
        context = Embedded.context();
        ch = new EmbeddedChannel(Embedded.steps(context));
    }

    @AfterEach
    void tearDown() {
        assertThat(ch.finishAndReleaseAll()).isFalse();
        context.pools().close();
    }

    private GatewayRequest request(Endpoint e, String body, String... headers) {
        return Embedded.apiRequest(context, e, body, headers);
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
        while ((o = ch.readOutbound()) != null) {
            HttpContent c = (HttpContent) o;
            body.append(c.content().toString(StandardCharsets.UTF_8));
            last = c instanceof LastHttpContent;
            c.release();
        }
        assertThat(last).isTrue();
        // Events due at the same moment (this simulator has no pace) leave in one chunk: count the events themselves.
        assertThat(body.toString().split("\n\n", -1)).hasSizeGreaterThan(4);
        assertThat(body.toString()).startsWith("data: {").endsWith("data: [DONE]\n\n");
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

    @Test
    void requestWhileAnotherIsActive_isRefused_theActiveOneGoesOn() {
        // Behind the pipelining gate this cannot happen; without it the starter must not lose either request.
        GatewayRequest first = request(Endpoint.CHAT_COMPLETIONS, CHAT.replace("{\"model\"", "{\"stream\":true,\"model\""),
                "x-sim-tps", "5", "x-sim-output-tokens", "50");
        ch.writeInbound(first);
        GatewayRequest second = request(Endpoint.CHAT_COMPLETIONS, CHAT);
        ch.writeInbound(second);
        assertThat(second.refCnt()).isZero();
        assertThat(second.record().outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(first.refCnt()).isOne();
        Object o;
        boolean refused = false;
        while ((o = ch.readOutbound()) != null) {
            refused |= o instanceof FullHttpResponse full && full.status().code() == 500;
            io.netty.util.ReferenceCountUtil.release(o);
        }
        assertThat(refused).isTrue();
        ch.close();
        ch.runPendingTasks();
        assertThat(first.refCnt()).isZero();
        assertThat(context.exchangesInProgress()).isZero();
    }
}
