package io.modelgateway.core.server;

import io.modelgateway.core.exchange.GatewayRequest;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.config.ConfigLoader;
import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.exchange.Admission;
import io.modelgateway.core.limit.RateLimiter;
import io.modelgateway.core.exchange.ExchangeObserver;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.testing.Embedded;
import io.modelgateway.core.testing.TestGateway;
import io.modelgateway.core.upstream.UpstreamPools;
import io.netty.handler.codec.http.HttpMethod;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class GatewayContextTest {
    private final UpstreamPools pools = new UpstreamPools();

    @AfterEach
    void tearDown() {
        pools.close();
    }

    @Test
    void end_tokensSummingPastLongMax_chargeTheLimitInsteadOfNothing() throws Exception {
        GatewayConfig config = ConfigLoader.parse("""
                keys:
                  - name: team-a
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                    limits: {tokens_per_minute: 1000}
                providers:
                  sim: {type: simulator}
                models:
                  sim-chat: {deployments: [{provider: sim, model: sim-chat-1}]}
                """, "test.yaml", Map.of("GATEWAY_KEY", TestGateway.KEY), "127.0.0.1:0");
        RateLimiter limiter = new RateLimiter(() -> 0L, () -> 1_787_316_000_000L); // a clock that stands still
        GatewayContext context = new GatewayContext(config, pools, limiter, ExchangeObserver.NOOP);
        KeyConfig key = config.keys().get(0);
        ModelConfig model = config.model("sim-chat");
        GatewayRequest request = new GatewayRequest(Embedded.request(HttpMethod.POST, "/api/v1/chat/completions",
                "{}"), Endpoint.CHAT_COMPLETIONS, Endpoint.CHAT_COMPLETIONS.style(), "req_x", true, 0);
        try {
            Admission admission = limiter.admit(key, model, 100);
            request.admission(admission, 10);
            // Input + output past Long.MAX_VALUE: a plain sum wraps negative, which settled as 0 tokens used.
            request.record().usage(Long.MAX_VALUE, 5, ExchangeRecord.UsageSource.UPSTREAM);

            context.end(request, Outcome.DONE);
        } finally {
            request.release();
        }

        Admission next = limiter.admit(key, model, 1);
        assertThat(next.admitted()).as("the exchange was charged").isFalse();
        assertThat(next.refusedLimit()).isEqualTo("tokens_per_minute");
    }
}
