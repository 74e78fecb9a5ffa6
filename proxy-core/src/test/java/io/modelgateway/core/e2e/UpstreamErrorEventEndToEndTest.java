package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.TestGateway;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A stream passed through as it is that carries the provider's own error event (the simulator's
 * {@code x-sim-fault: error_after=3}) failed upstream, like a cut stream or the same error after translation: the
 * record (so the access log) says {@code upstream_error}, and the metrics count it so.
 */
class UpstreamErrorEventEndToEndTest {
    private static TestGateway gw;
    private static final RecordingObserver records = new RecordingObserver();

    @BeforeAll
    static void start() throws Exception {
        gw = TestGateway.start(TestGateway.simulatorConfig(), records);
    }

    @AfterAll
    static void stop() {
        gw.close();
    }

    @Test
    void chatStream_endingWithTheProvidersErrorEvent_isAnUpstreamError() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions", "{\"model\":\"sim-chat\",\"stream\":true,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}", "x-sim-fault", "error_after=3");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("data: {\"error\":").doesNotContain("[DONE]");
        ExchangeRecord rec = records.of(r);
        assertThat(rec.outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
        assertThat(rec.outcome().label()).isEqualTo("upstream_error");
        assertThat(gw.get("/metrics").body()).contains("gateway_requests_total{endpoint=\"chat_completions\","
                + "key=\"test\",model=\"sim-chat\",outcome=\"upstream_error\",status=\"200\"} 1.0");
    }

    @Test
    void messagesStream_endingWithTheProvidersErrorEvent_isAnUpstreamError() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/messages", "{\"model\":\"sim-chat\",\"max_tokens\":50,"
                + "\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}",
                "x-sim-fault", "error_after=3");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("event: error\n").doesNotContain("message_stop");
        assertThat(records.of(r).outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
        assertThat(gw.get("/metrics").body()).contains("gateway_requests_total{endpoint=\"messages\","
                + "key=\"test\",model=\"sim-chat\",outcome=\"upstream_error\",status=\"200\"} 1.0");
    }

    @Test
    void cleanStream_isStillDone() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions", "{\"model\":\"sim-chat\",\"stream\":true,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}");
        assertThat(r.body()).contains("[DONE]");
        assertThat(records.of(r).outcome()).isEqualTo(Outcome.DONE);
    }
}
