package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.simulator.SimulatorServer;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.TestGateway;
import java.net.http.HttpResponse;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Provider timeouts over real sockets (standalone simulator, provider type openai): a first byte too late is
 * 504 in the caller's style (or another deployment's answer when one is there), a stream that goes silent or runs
 * past the whole-exchange deadline ends with the style's error event and no terminator (GD-9, GD-10).
 */
class UpstreamTimeoutsEndToEndTest {
    static final String CHAT = "{\"model\":\"%s\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}";
    static final String STREAM = "{\"model\":\"%s\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}";
    private static SimulatorServer sim;
    private static TestGateway gw;
    private static final RecordingObserver records = new RecordingObserver();

    @BeforeAll
    static void start() throws Exception {
        sim = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, null, null);
        String base = "http://127.0.0.1:" + sim.port() + "/v1";
        gw = TestGateway.start("""
                keys:
                  - name: test
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                providers:
                  quick: {type: openai, base_url: "%s", forward_headers: ["x-sim-*"],
                          timeouts: {first_byte_ms: 300, stream_idle_ms: 300, total_ms: 1500}}
                  good: {type: openai, base_url: "%s"}
                models:
                  alone: {retries: {max: 0}, deployments: [{provider: quick, model: m}]}
                  backed: {deployments: [{provider: quick, model: m, weight: 1000000}, {provider: good, model: m, weight: 1}]}
                """.formatted(base, base), records);
    }

    @AfterAll
    static void stop() {
        gw.close();
        sim.close();
    }

    @Test
    void firstByteTooLate_504InEitherStyle() throws Exception {
        long start = System.nanoTime();
        HttpResponse<String> chat = gw.call("/api/v1/chat/completions", CHAT.formatted("alone"), "x-sim-fault", "delay_ms=3000");
        assertThat(chat.statusCode()).isEqualTo(504);
        assertThat(chat.body()).contains("\"code\":\"upstream_timeout\"");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2500);
        HttpResponse<String> messages = gw.call("/api/v1/messages", CHAT.formatted("alone"), "x-sim-fault", "delay_ms=3000");
        assertThat(messages.statusCode()).isEqualTo(504);
        assertThat(messages.body()).contains("\"type\":\"timeout_error\"");
        assertThat(gw.call("/api/v1/chat/completions", CHAT.formatted("alone")).statusCode()).isEqualTo(200);
    }

    @Test
    void firstByteTooLate_anotherDeploymentAnswers() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions", CHAT.formatted("backed"), "x-sim-fault", "delay_ms=3000");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("\"object\":\"chat.completion\"");
    }

    @Test
    void streamGoesSilent_errorEventAfterTheEventsSoFar_noDone() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions", STREAM.formatted("alone"), "x-sim-tps", "2");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).startsWith("data: {").doesNotContain("[DONE]")
                .endsWith("data: {\"error\":{\"message\":\"The upstream provider stopped sending in time.\","
                        + "\"type\":\"server_error\",\"param\":null,\"code\":\"upstream_timeout\"}}\n\n");
        ExchangeRecord rec = records.of(r);
        assertThat(rec.outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.ESTIMATED);
    }

    @Test
    void messagesStreamPastTheTotalDeadline_endsWithTimeoutErrorEvent() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/messages",
                "{\"model\":\"alone\",\"max_tokens\":200,\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
                "x-sim-tps", "10", "x-sim-output-tokens", "100");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).startsWith("event: message_start").doesNotContain("message_stop")
                .contains("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"timeout_error\"");
    }
}
