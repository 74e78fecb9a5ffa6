package io.modelgateway.core.route;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.config.ConfigLoader;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.server.GatewayContext;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.testing.Embedded;
import io.modelgateway.core.testing.TestGateway;
import io.modelgateway.core.upstream.UpstreamPools;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The retrying exchange on an EmbeddedChannel with the in-process simulator, on the channel's frozen clock: waits
 * happen only when the test advances time, so "not before the Retry-After" and "nothing after the client left" are
 * exact.
 */
class RetryingExchangeTest {
    private static final String YAML = """
            keys: [{name: test, key: "${GATEWAY_KEY}", models: ["*"]}]
            providers:
              sim: {type: simulator}
              sim-busy: {type: simulator, cooldown: off, simulator: {fault: "status=503,retry_after=1"}}
              sim-slow-down: {type: simulator, cooldown: off, simulator: {fault: "status=429,retry_after=30"}}
              sim-delayed-503: {type: simulator, cooldown: off, simulator: {fault: "status=503,delay_ms=300"}}
            models:
              good: {deployments: [{provider: sim, model: good-1}]}
              busy:
                retries: {max: 1, backoff_ms: 10, max_backoff_ms: 2000}
                fallbacks: [good]
                deployments: [{provider: sim-busy, model: busy-1}]
              slow-down:
                deployments: [{provider: sim-slow-down, model: slow-1}]
              delayed:
                retries: {max: 0}
                fallbacks: [good]
                deployments: [{provider: sim-delayed-503, model: delayed-1}]
            """;
    private GatewayContext context;
    private EmbeddedChannel ch;

    @BeforeEach
    void setUp() throws Exception {
        context = new GatewayContext(ConfigLoader.parse(YAML, "test.yaml", Map.of("GATEWAY_KEY", TestGateway.KEY),
                "127.0.0.1:0"), new UpstreamPools());
        ch = new EmbeddedChannel(Embedded.steps(context));
        ch.freezeTime();
    }

    @AfterEach
    void tearDown() {
        assertThat(ch.finishAndReleaseAll()).isFalse();
        context.pools().close();
    }

    private GatewayRequest chat(String model) {
        String body = "{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
        return Embedded.apiRequest(context, Endpoint.CHAT_COMPLETIONS, body);
    }

    private void advance(long ms) {
        ch.advanceTimeBy(ms, TimeUnit.MILLISECONDS);
        ch.runPendingTasks();
    }

    @Test
    void retryAfter_isWaitedOut_thenTheFallbackAnswers() {
        GatewayRequest req = chat("busy");
        ch.writeInbound(req);
        assertThat((Object) ch.readOutbound()).as("nothing before the upstream's Retry-After").isNull();
        advance(990);
        assertThat((Object) ch.readOutbound()).isNull();
        assertThat(req.record().attempts()).isEqualTo(1);

        advance(1010); // the retry on busy-1 fails again; its budget is spent: the fallback goes at once
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(200);
        assertThat(Embedded.body(r)).contains("\"model\":\"good-1\"");
        ExchangeRecord record = req.record();
        assertThat(record.attempts()).isEqualTo(3);
        assertThat(record.provider()).isEqualTo("sim");
        assertThat(record.deployment()).isEqualTo("good-1");
        assertThat(record.outcome()).isEqualTo(Outcome.DONE);
        assertThat(req.refCnt()).isZero();
    }

    @Test
    void clientLeavesDuringTheWait_noFurtherAttempt_endsCancelled() {
        GatewayRequest req = chat("busy");
        ch.writeInbound(req);
        advance(500);
        ch.close();
        ch.runPendingTasks();
        advance(5000);
        assertThat((Object) ch.readOutbound()).isNull();
        assertThat(req.record().attempts()).isEqualTo(1);
        assertThat(req.record().outcome()).isEqualTo(Outcome.CANCELLED);
        assertThat(req.record().usageSource()).isEqualTo(ExchangeRecord.UsageSource.NONE);
        assertThat(req.refCnt()).isZero();
        DeploymentHealth busy = context.routing().health(context.config().model("busy").deployments().get(0));
        assertThat(busy.inFlight()).isZero();
    }

    @Test
    void retryAfterAboveTheCap_isAnsweredAtOnceWithItsRetryAfter() {
        GatewayRequest req = chat("slow-down");
        ch.writeInbound(req);
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(429);
        assertThat(r.headers().get("retry-after")).isEqualTo("30");
        assertThat(r.headers().get("retry-after-ms")).isEqualTo("30000");
        assertThat(Embedded.body(r)).contains("rate_limit_exceeded");
        assertThat(req.record().attempts()).isEqualTo(1);
        assertThat(req.record().outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
    }

    @Test
    void simulatedErrorDelay_passesBeforeTheFailureCounts() {
        GatewayRequest req = chat("delayed");
        ch.writeInbound(req);
        advance(250);
        assertThat((Object) ch.readOutbound()).isNull();
        assertThat(req.record().attempts()).isEqualTo(1);
        advance(100);
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(200);
        assertThat(Embedded.body(r)).contains("\"model\":\"good-1\"");
        assertThat(req.record().attempts()).isEqualTo(2);
    }

    @Test
    void clientLeavesWhileTheSimulatedErrorIsDelayed_noAttemptFollows() {
        GatewayRequest req = chat("delayed");
        ch.writeInbound(req);
        advance(100);
        ch.close();
        ch.runPendingTasks();
        advance(1000);
        assertThat((Object) ch.readOutbound()).isNull();
        assertThat(req.record().attempts()).isEqualTo(1);
        assertThat(req.record().outcome()).isEqualTo(Outcome.CANCELLED);
        assertThat(req.refCnt()).isZero();
    }

    @Test
    void routingTable_isBuiltOncePerConfig_andOnlyAPlainModelSkipsTheRouter() throws Exception {
        assertThat(context.routing().table(context.config())).isSameAs(context.routing().table(context.config()));
        assertThat(context.routing().table(context.config()).route("good").singleAttempt())
                .as("default retries: max 2").isFalse();
        DeploymentHealth busy = context.routing().table(context.config()).route("busy").health(0);
        context.swap(ConfigLoader.parse(YAML.replace("good: {deployments", "good: {retries: {max: 0}, deployments"),
                "test.yaml", Map.of("GATEWAY_KEY", TestGateway.KEY), "127.0.0.1:0"));
        RoutingTable table = context.routing().table(context.config());
        assertThat(table.route("good").singleAttempt()).isTrue();
        assertThat(table.route("delayed").singleAttempt()).as("it has a fallback").isFalse();
        assertThat(table.route("busy").health(0)).as("health outlives a reload").isSameAs(busy);

        GatewayRequest req = chat("good");
        ch.writeInbound(req);
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(200);
        r.release();
        assertThat(req.record().attempts()).isEqualTo(1);
        assertThat(req.record().deployment()).isEqualTo("good-1");
    }

    @Test
    void backoff_isFullJitterWithinTheExponentialCap() {
        io.modelgateway.core.config.RetryConfig rc = new io.modelgateway.core.config.RetryConfig(5, 100, 1000);
        java.util.SplittableRandom random = new java.util.SplittableRandom(3);
        long max0 = 0;
        long max3 = 0;
        for (int k = 0; k < 5000; k++) {
            long b0 = RetryingExchange.backoff(rc, 0, random);
            long b3 = RetryingExchange.backoff(rc, 3, random);
            assertThat(b0).isBetween(0L, 100L);
            assertThat(b3).isBetween(0L, 800L);
            assertThat(RetryingExchange.backoff(rc, 40, random)).isBetween(0L, 1000L);
            max0 = Math.max(max0, b0);
            max3 = Math.max(max3, b3);
        }
        assertThat(max0).isGreaterThan(90);
        assertThat(max3).isGreaterThan(700);
    }
}
