package io.modelgateway.core.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.config.ConfigLoader;
import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.exchange.AnswerStart;
import io.modelgateway.core.upstream.UpstreamPools;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOutboundHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The answer writer writes from {@link AnswerStart}, not from the exchange's own context: correct only while every
 * handler from there to the end of the pipeline is inbound only, which this holds the pipeline to.
 */
class AnswerStartTest {
    private final UpstreamPools pools = new UpstreamPools();

    @AfterEach
    void tearDown() {
        pools.close();
    }

    @Test
    void everyClientPipeline_answersFromTheBodyAggregator_andOnlyInboundHandlersFollowIt() throws Exception {
        GatewayConfig config = ConfigLoader.parse("""
                access_log: off
                keys:
                  - name: a
                    key: ${K}
                    models: ["*"]
                    limits: {requests_per_minute: 10}
                providers:
                  sim: {type: simulator}
                models:
                  sim-chat: {deployments: [{provider: sim}]}
                """, "answer-start.yaml", Map.of("K", "sk-answer-start"), "127.0.0.1:0");
        GatewayChannelInitializer initializer = new GatewayChannelInitializer(new GatewayContext(config, pools));
        EmbeddedChannel http1 = new EmbeddedChannel();
        initializer.init(http1);
        EmbeddedChannel http2Stream = new EmbeddedChannel();
        initializer.initStream(http2Stream);

        for (EmbeddedChannel ch : List.of(http1, http2Stream)) {
            try {
                List<String> names = ch.pipeline().names();
                List<String> after = names.subList(names.indexOf(PipelineNames.BODY_AGGREGATOR), names.size());

                assertThat(ch.attr(AnswerStart.KEY).get()).isSameAs(ch.pipeline().context(PipelineNames.BODY_AGGREGATOR));
                assertThat(after).contains(PipelineNames.ROUTER, PipelineNames.LIMIT_CHECK, PipelineNames.EXCHANGE);
                for (String name : after) {
                    ChannelHandler h = ch.pipeline().get(name); // null for the pipeline's own tail
                    if (h != null) {
                        assertThat(h).as(name).isNotInstanceOf(ChannelOutboundHandler.class);
                    }
                }
            } finally {
                ch.finishAndReleaseAll();
            }
        }
    }
}
