package io.modelgateway.core.route;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.server.GatewayContext;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.testing.Embedded;
import io.modelgateway.core.testing.TestGateway;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import org.junit.jupiter.api.Test;

class ModelListResponderTest {
    @Test
    void modelList_listsOnlyTheKeysModels() throws Exception {
        GatewayContext context = Embedded.context();
        EmbeddedChannel ch = new EmbeddedChannel(new ModelListResponder(context.exchanges()));
        GatewayRequest req = new GatewayRequest(Embedded.request(HttpMethod.GET, "/api/v1/models", ""), null,
                io.modelgateway.codecs.ApiStyle.OPENAI, "req_x", true, 0);
        req.config(context.config());
        req.key(context.config().findKey(io.modelgateway.core.config.KeyConfig.sha256("sk-limited")));
        ch.writeInbound(req);
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(200);
        assertThat(Embedded.body(r)).startsWith("{\"object\":\"list\",\"data\":[{\"id\":\"sim-embed\",\"object\":\"model\"")
                .doesNotContain("sim-chat");
        assertThat(req.refCnt()).isZero();
        assertThat(ch.finishAndReleaseAll()).isFalse();
        context.pools().close();
        assertThat(TestGateway.KEY).isNotBlank();
    }
}
