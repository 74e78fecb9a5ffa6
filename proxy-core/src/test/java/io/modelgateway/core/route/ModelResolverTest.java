package io.modelgateway.core.route;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.json.RequestPeek;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.server.GatewayContext;
import io.modelgateway.core.testing.Embedded;
import io.modelgateway.core.testing.TestGateway;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The request step that resolves the model and checks the key may use it there, alone on an EmbeddedChannel. */
class ModelResolverTest {
    private GatewayContext context;
    private EmbeddedChannel ch;

    @BeforeEach
    void setUp() throws Exception {
        context = Embedded.context();
        ch = new EmbeddedChannel(new ModelResolver(context.exchanges()));
    }

    @AfterEach
    void tearDown() {
        assertThat(ch.finishAndReleaseAll()).isFalse();
        context.pools().close();
    }

    /** A request as it reaches the step: authenticated with {@code key}, its body peeked. */
    private GatewayRequest request(String key, Endpoint e, String body) {
        GatewayRequest r = Embedded.apiRequest(context, e, body);
        r.key(context.config().findKey(KeyConfig.sha256(key)));
        r.peek(RequestPeek.peek(e, r.body(), false));
        assertThat(r.peek().ok()).isTrue();
        return r;
    }

    private FullHttpResponse refused(GatewayRequest req) {
        ch.writeInbound(req);
        FullHttpResponse r = ch.readOutbound();
        assertThat(req.refCnt()).isZero();
        assertThat(req.record().outcome()).isEqualTo(Outcome.REJECTED);
        assertThat((Object) ch.readInbound()).isNull();
        return r;
    }

    @Test
    void knownModel_goesOnWithIt_andTheRecordNamesIt() {
        GatewayRequest req = request(TestGateway.KEY, Endpoint.CHAT_COMPLETIONS,
                "{\"model\":\"sim-chat\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        ch.writeInbound(req);
        GatewayRequest out = ch.readInbound();
        assertThat(out.model().name()).isEqualTo("sim-chat");
        assertThat(out.record().model()).isEqualTo("sim-chat");
        out.release();
    }

    @Test
    void unknownModel_is404() {
        FullHttpResponse r = refused(request(TestGateway.KEY, Endpoint.CHAT_COMPLETIONS, "{\"model\":\"nope\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"));
        assertThat(r.status().code()).isEqualTo(404);
        assertThat(Embedded.body(r)).contains("model_not_found");
    }

    @Test
    void modelTheKeyMayNotUse_is403() {
        FullHttpResponse r = refused(request("sk-limited", Endpoint.CHAT_COMPLETIONS, "{\"model\":\"sim-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"));
        assertThat(r.status().code()).isEqualTo(403);
        assertThat(Embedded.body(r)).contains("model_not_allowed");
    }

    @Test
    void embeddingModelOnChat_andChatModelOnEmbeddings_are400() {
        FullHttpResponse r = refused(request(TestGateway.KEY, Endpoint.CHAT_COMPLETIONS, "{\"model\":\"sim-embed\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"));
        assertThat(r.status().code()).isEqualTo(400);
        assertThat(Embedded.body(r)).contains("is an embedding model");
        r = refused(request(TestGateway.KEY, Endpoint.EMBEDDINGS, "{\"model\":\"sim-chat\",\"input\":\"a\"}"));
        assertThat(r.status().code()).isEqualTo(400);
        assertThat(Embedded.body(r)).contains("is not an embedding model");
    }

    @Test
    void dimensionsOnAModelWithoutThem_is400() {
        FullHttpResponse r = refused(request(TestGateway.KEY, Endpoint.EMBEDDINGS,
                "{\"model\":\"sim-embed-fixed\",\"input\":\"a\",\"dimensions\":8}"));
        assertThat(r.status().code()).isEqualTo(400);
        assertThat(Embedded.body(r)).contains("\"param\":\"dimensions\"");
    }
}
