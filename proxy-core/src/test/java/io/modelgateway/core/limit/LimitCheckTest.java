package io.modelgateway.core.limit;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.json.RequestPeek;
import io.modelgateway.core.config.ConfigLoader;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.server.GatewayContext;
import io.modelgateway.core.testing.Embedded;
import io.modelgateway.core.testing.TestGateway;
import io.modelgateway.core.upstream.UpstreamPools;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The request step that admits a request against its limits, alone on an EmbeddedChannel. */
class LimitCheckTest {
    private static final String CHAT = "{\"model\":\"sim-chat\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    private GatewayContext context;
    private EmbeddedChannel ch;

    @BeforeEach
    void setUp() throws Exception {
        String yaml = TestGateway.simulatorConfig().replace("""
                    models: ["*"]
                """, """
                    models: ["*"]
                    limits: {requests_per_minute: 2}
                """);
        context = new GatewayContext(ConfigLoader.parse(yaml, "test.yaml", Map.of("GATEWAY_KEY", TestGateway.KEY),
                "127.0.0.1:0"), new UpstreamPools());
        ch = new EmbeddedChannel(new LimitCheck(context.limiters(), context.exchanges()));
    }

    @AfterEach
    void tearDown() {
        assertThat(ch.finishAndReleaseAll()).isFalse();
        context.pools().close();
    }

    /** A request as it reaches the step: authenticated, peeked, its model resolved. */
    private GatewayRequest request() {
        GatewayRequest r = Embedded.apiRequest(context, Endpoint.CHAT_COMPLETIONS, CHAT);
        r.key(context.config().findKey(KeyConfig.sha256(TestGateway.KEY)));
        r.peek(RequestPeek.peek(Endpoint.CHAT_COMPLETIONS, r.body(), false));
        r.model(context.config().model("sim-chat"));
        return r;
    }

    @Test
    void withinTheLimit_goesOnWithItsAdmission_pastIt429InStyle() {
        for (int i = 0; i < 2; i++) {
            ch.writeInbound(request());
            GatewayRequest admitted = ch.readInbound();
            assertThat(admitted.admission().admitted()).isTrue();
            context.end(admitted, Outcome.DONE); // settles the reservation
            admitted.release();
        }
        GatewayRequest third = request();
        ch.writeInbound(third);
        assertThat((Object) ch.readInbound()).isNull();
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(429);
        assertThat(r.headers().get("retry-after")).isNotNull();
        assertThat(Embedded.body(r)).contains("\"type\":\"requests\"").contains("rate_limit_exceeded");
        assertThat(third.refCnt()).isZero();
        assertThat(third.record().outcome()).isEqualTo(Outcome.LIMITED);
        assertThat(third.record().limit()).isEqualTo("requests_per_minute");
    }
}
