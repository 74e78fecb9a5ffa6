package io.modelgateway.core.observe;

import io.modelgateway.codecs.translate.Usage;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.Endpoint;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class GatewayMetricsTest {
    private static final String CHAT_M = "{endpoint=\"chat_completions\",model=\"gpt-4o-mini\"";
    private final AtomicLong connections = new AtomicLong();
    private final GatewayMetrics metrics = new GatewayMetrics(connections::get);

    private void exchange(ExchangeRecord r) {
        metrics.started(r);
        metrics.ended(r);
    }

    @Test
    void sharedState_readsTheSuppliersAtScrape() {
        AtomicLong timeouts = new AtomicLong();
        boolean[] up = {true};
        metrics.sharedState(() -> up[0], timeouts::get, () -> 2, () -> 0, () -> 7, () -> 11);

        String before = metrics.scrapeText();
        up[0] = false;
        timeouts.set(3);
        String after = metrics.scrapeText();

        assertThat(before).contains("gateway_shared_state_up 1.0")
                .contains("gateway_shared_state_errors_total{reason=\"timeout\"} 0.0")
                .contains("gateway_shared_state_errors_total{reason=\"connection\"} 2.0")
                .contains("gateway_shared_state_errors_total{reason=\"redis_error\"} 0.0")
                .contains("gateway_shared_state_fallbacks_total 7.0")
                .contains("gateway_shared_state_batched_total 11.0");
        assertThat(after).contains("gateway_shared_state_up 0.0")
                .contains("gateway_shared_state_errors_total{reason=\"timeout\"} 3.0");
    }

    @Test
    void sharedState_checkTimer_feedsTheCheckHistogram() {
        java.util.function.LongConsumer timer = metrics.sharedState(() -> true, () -> 0, () -> 0, () -> 0, () -> 0,
                () -> 0);

        timer.accept(30_000); // 30 µs
        timer.accept(70_000);
        timer.accept(3_000_000); // 3 ms

        assertThat(metrics.scrapeText()).contains(
                "gateway_shared_state_check_seconds_bucket{le=\"5.0E-5\"} 1\n",
                "gateway_shared_state_check_seconds_bucket{le=\"1.0E-4\"} 2\n",
                "gateway_shared_state_check_seconds_bucket{le=\"0.0025\"} 2\n",
                "gateway_shared_state_check_seconds_bucket{le=\"0.005\"} 3\n",
                "gateway_shared_state_check_seconds_count 3\n");
    }

    @Test
    void streamedExchange_countsRequestLatenciesAndTokens() {
        exchange(Records.stream("team-a", "gpt-4o-mini"));
        exchange(Records.stream("team-a", "gpt-4o-mini"));

        String text = metrics.scrapeText();

        assertThat(text).contains(
                "gateway_requests_total{endpoint=\"chat_completions\",key=\"team-a\",model=\"gpt-4o-mini\","
                        + "outcome=\"done\",status=\"200\"} 2.0\n",
                // 1.234567891 s lands in the 2.5 s bucket
                "gateway_request_duration_seconds_bucket" + CHAT_M + ",le=\"1.0\"} 0\n",
                "gateway_request_duration_seconds_bucket" + CHAT_M + ",le=\"2.5\"} 2\n",
                "gateway_request_duration_seconds_count" + CHAT_M + "} 2\n",
                // 12.3 ms first byte: the 25 ms bucket
                "gateway_time_to_first_token_seconds_bucket" + CHAT_M + ",le=\"0.01\"} 0\n",
                "gateway_time_to_first_token_seconds_bucket" + CHAT_M + ",le=\"0.025\"} 2\n",
                // 4.5 ms upstream head: the 5 ms bucket
                "gateway_upstream_latency_seconds_bucket{provider=\"openai\",le=\"0.005\"} 2\n",
                "gateway_upstream_latency_seconds_count{provider=\"openai\"} 2\n",
                "gateway_tokens_total{direction=\"input\",key=\"team-a\",model=\"gpt-4o-mini\",type=\"input\"} 20.0\n",
                "gateway_tokens_total{direction=\"output\",key=\"team-a\",model=\"gpt-4o-mini\",type=\"output\"} 40.0\n");
        assertThat(text).contains("# TYPE gateway_requests_total counter\n",
                "# TYPE gateway_request_duration_seconds histogram\n",
                "# TYPE gateway_inflight_exchanges gauge\n");
        assertThat(text).doesNotContain("gateway_limit_refusals_total{");
    }

    @Test
    void nonStream_hasNoTimeToFirstToken() {
        ExchangeRecord r = Records.stream("team-a", "m");
        r.stream(false);
        exchange(r);

        assertThat(metrics.scrapeText())
                .contains("gateway_request_duration_seconds_count{endpoint=\"chat_completions\",model=\"m\"} 1\n")
                .doesNotContain("gateway_time_to_first_token_seconds_count{");
    }

    @Test
    void limitRefusal_isCountedWithItsLimitAndNoUpstreamLatency() {
        exchange(Records.limited("team-b", "claude-sonnet", "tokens_per_minute"));

        assertThat(metrics.scrapeText()).contains(
                "gateway_limit_refusals_total{key=\"team-b\",limit=\"tokens_per_minute\","
                        + "model=\"claude-sonnet\"} 1.0\n",
                "gateway_requests_total{endpoint=\"messages\",key=\"team-b\",model=\"claude-sonnet\","
                        + "outcome=\"limited\",status=\"429\"} 1.0\n")
                .doesNotContain("gateway_upstream_latency_seconds_count", "gateway_tokens_total{");
    }

    @Test
    void repeatedRefusals_countPerLimit() {
        for (int i = 0; i < 3; i++) {
            exchange(Records.limited("team-b", "m", "requests_per_minute"));
        }
        exchange(Records.limited("team-b", "m", "concurrent_streams"));

        assertThat(metrics.scrapeText()).contains(
                "gateway_limit_refusals_total{key=\"team-b\",limit=\"requests_per_minute\",model=\"m\"} 3.0\n",
                "gateway_limit_refusals_total{key=\"team-b\",limit=\"concurrent_streams\",model=\"m\"} 1.0\n");
    }

    @Test
    void missingNames_useFixedLabelValues() {
        exchange(Records.bare(null, 0, Outcome.CANCELLED));
        exchange(Records.bare(Endpoint.EMBEDDINGS, 401, Outcome.REJECTED));

        assertThat(metrics.scrapeText()).contains(
                "gateway_requests_total{endpoint=\"models\",key=\"none\",model=\"unknown\",outcome=\"cancelled\","
                        + "status=\"0\"} 1.0\n",
                "gateway_requests_total{endpoint=\"embeddings\",key=\"none\",model=\"unknown\",outcome=\"rejected\","
                        + "status=\"401\"} 1.0\n");
    }

    @Test
    void upstreamError_isCountedPerProvider() {
        ExchangeRecord r = new ExchangeRecord("req_x", Endpoint.CHAT_COMPLETIONS, 0, 0, 10);
        r.model("m");
        r.deployment("anthropic", "claude");
        r.head(502, 1_000);
        r.end(Outcome.UPSTREAM_ERROR, 2_000);
        exchange(r);

        assertThat(metrics.scrapeText()).contains(
                "gateway_upstream_errors_total{provider=\"anthropic\"} 1.0\n",
                "outcome=\"upstream_error\",status=\"502\"} 1.0\n");
    }

    @Test
    void retriedFailures_areCountedPerProviderAndReason_thoughTheCallerGotAnAnswer() {
        ExchangeRecord r = new ExchangeRecord("req_y", Endpoint.CHAT_COMPLETIONS, 0, 0, 10);
        r.model("m");
        r.retriedFailure("flaky", "503");
        r.retriedFailure("flaky", "503");
        r.retriedFailure("down", "connect");
        r.deployment("good", "m");
        r.head(200, 1_000);
        r.end(Outcome.DONE, 2_000);
        exchange(r);

        assertThat(metrics.scrapeText()).contains(
                "gateway_upstream_retried_failures_total{provider=\"flaky\",reason=\"503\"} 2.0\n",
                "gateway_upstream_retried_failures_total{provider=\"down\",reason=\"connect\"} 1.0\n")
                .doesNotContain("gateway_upstream_errors_total{provider=\"good\"}");
    }

    @Test
    void protocolErrorsAndMemoryRefusals_areCountedPerProviderAndReason() {
        ExchangeRecord r = new ExchangeRecord("req_z", Endpoint.CHAT_COMPLETIONS, 0, 0, 10);
        r.model("m");
        r.protocolError("hostile", "malformed_head"); // retried past
        r.deployment("hostile", "m");
        r.protocolError("hostile", "sse_event_too_large");
        r.memoryRefusal("hostile", "collected_budget");
        r.head(502, 1_000);
        r.end(Outcome.UPSTREAM_ERROR, 2_000);
        exchange(r);
        exchange(Records.stream("team-a", "m"));

        assertThat(metrics.scrapeText()).contains(
                "gateway_upstream_protocol_errors_total{provider=\"hostile\",reason=\"malformed_head\"} 1.0\n",
                "gateway_upstream_protocol_errors_total{provider=\"hostile\",reason=\"sse_event_too_large\"} 1.0\n",
                "gateway_memory_refusals_total{provider=\"hostile\",reason=\"collected_budget\"} 1.0\n")
                .doesNotContain("provider=\"openai\",reason=");
    }

    @Test
    void sameSeriesManyStatuses_eachPairCountedSeparately() {
        for (int status = 200; status < 300; status++) { // more pairs than the per-series cache holds
            ExchangeRecord r = Records.bare(Endpoint.CHAT_COMPLETIONS, status, Outcome.DONE);
            exchange(r);
            exchange(r);
        }
        String text = metrics.scrapeText();
        assertThat(text).contains("outcome=\"done\",status=\"200\"} 2.0\n", "outcome=\"done\",status=\"299\"} 2.0\n");
    }

    @Test
    void newNamesAfterReload_getTheirOwnSeries() {
        exchange(Records.stream("team-a", "old-model"));
        // A reload adds a key and a model: the next record simply carries the new names.
        exchange(Records.stream("team-new", "new-model"));

        assertThat(metrics.scrapeText()).contains(
                "key=\"team-a\",model=\"old-model\",outcome=\"done\",status=\"200\"} 1.0\n",
                "key=\"team-new\",model=\"new-model\",outcome=\"done\",status=\"200\"} 1.0\n");
    }

    @Test
    void inflight_goesUpOnStartAndDownOnEnd() {
        ExchangeRecord a = Records.stream("k", "m");
        ExchangeRecord b = Records.stream("k", "m");
        metrics.started(a);
        metrics.started(b);
        assertThat(metrics.scrapeText()).contains("gateway_inflight_exchanges 2.0\n");

        metrics.ended(a);
        assertThat(metrics.scrapeText()).contains("gateway_inflight_exchanges 1.0\n");
        metrics.ended(b);
        assertThat(metrics.scrapeText()).contains("gateway_inflight_exchanges 0.0\n");
    }

    @Test
    void upstreamConnections_isReadFromTheSupplierAtScrape() {
        connections.set(3);
        assertThat(metrics.scrapeText()).contains("gateway_upstream_connections 3.0\n");
        connections.set(17);
        assertThat(metrics.scrapeText()).contains("gateway_upstream_connections 17.0\n");
        assertThat(new GatewayMetrics().scrapeText()).doesNotContain("gateway_upstream_connections");
    }

    @Test
    void accessLogDrops_isExposedAsACounter() {
        metrics.accessLogDrops(() -> 5);
        assertThat(metrics.scrapeText()).contains("gateway_access_log_dropped_total 5.0\n");
    }

    @Test
    void concurrentEnds_loseNoCount() throws InterruptedException {
        int perThread = 20_000;
        Thread[] threads = new Thread[4];
        for (int t = 0; t < threads.length; t++) {
            String key = "team-" + (t % 2); // two threads share each series, and new series race in
            threads[t] = new Thread(() -> {
                for (int i = 0; i < perThread; i++) {
                    exchange(Records.stream(key, "m"));
                }
            });
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        assertThat(metrics.scrapeText()).contains(
                "key=\"team-0\",model=\"m\",outcome=\"done\",status=\"200\"} 40000.0\n",
                "key=\"team-1\",model=\"m\",outcome=\"done\",status=\"200\"} 40000.0\n",
                "gateway_request_duration_seconds_count{endpoint=\"chat_completions\",model=\"m\"} 80000\n",
                "gateway_inflight_exchanges 0.0\n");
    }

    @Test
    void absurdTokenCounts_neverTurnTheCounterNegative_andTheScrapeStillRenders() {
        // Ten exchanges of 10^18 input tokens, and Long.MAX_VALUE output tokens twice: a long sum wraps below zero,
        // and the client library refuses to render a negative counter (the scrape threw, /metrics closed).
        for (int i = 0; i < 10; i++) {
            ExchangeRecord r = Records.stream("team-a", "m");
            r.usage(1_000_000_000_000_000_000L, i < 2 ? Long.MAX_VALUE : 0, ExchangeRecord.UsageSource.UPSTREAM);
            exchange(r);
        }

        String text = metrics.scrapeText();

        assertThat(sample(text, "gateway_tokens_total{direction=\"input\",key=\"team-a\",model=\"m\",type=\"input\"}"))
                .isEqualTo(1e19);
        assertThat(sample(text, "gateway_tokens_total{direction=\"output\",key=\"team-a\",model=\"m\",type=\"output\"}"))
                .isEqualTo(2.0 * Long.MAX_VALUE);
    }

    /** Each token type is its own series, counted once: the types of a direction sum to its total (contract 8.8). */
    @Test
    void tokenTypes_eachTypeItsOwnSeries_summingToTheDirection() {
        ExchangeRecord r = Records.stream("team-a", "m");
        // 400 uncached + 100 written to the cache + 1000 read from it; 90 out, 64 of them reasoning
        r.usage(new Usage(400, 90, 100, 1000, 64), ExchangeRecord.UsageSource.UPSTREAM);
        exchange(r);

        String text = metrics.scrapeText();

        String series = "gateway_tokens_total{direction=\"%s\",key=\"team-a\",model=\"m\",type=\"%s\"}";
        assertThat(sample(text, series.formatted("input", "input"))).isEqualTo(400.0);
        assertThat(sample(text, series.formatted("input", "cached_input"))).isEqualTo(1000.0);
        assertThat(sample(text, series.formatted("input", "cache_write"))).isEqualTo(100.0);
        assertThat(sample(text, series.formatted("output", "output"))).isEqualTo(26.0);
        assertThat(sample(text, series.formatted("output", "reasoning"))).isEqualTo(64.0);
    }

    @Test
    void tokenTypes_anExchangeWithoutCacheOrReasoning_addsNoZeroSeries() {
        exchange(Records.stream("team-a", "m"));

        assertThat(metrics.scrapeText()).contains("type=\"input\"", "type=\"output\"")
                .doesNotContain("type=\"cached_input\"", "type=\"cache_write\"", "type=\"reasoning\"");
    }

    /** The value of the sample line that starts with {@code series}. */
    static double sample(String exposition, String series) {
        for (String line : exposition.split("\n")) {
            if (line.startsWith(series + " ")) {
                return Double.parseDouble(line.substring(series.length() + 1));
            }
        }
        throw new AssertionError("no sample " + series + " in\n" + exposition);
    }
}
