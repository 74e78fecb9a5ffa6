package io.modelgateway.codecs.usage;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.json.JsonScanner;
import io.modelgateway.codecs.translate.Usage;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** The byte reader of usage objects agrees with the scanner one on every shape the providers send. */
class UsageCountsTest {

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"prompt_tokens\":12,\"completion_tokens\":7,\"total_tokens\":19}",
        "{ \"prompt_tokens\" : 1200 , \"completion_tokens\" : 70,\"total_tokens\":1270,\"prompt_tokens_details\":"
                + "{\"cached_tokens\":1024,\"audio_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":64,"
                + "\"audio_tokens\":0,\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}",
        "{\"input_tokens\":10,\"cache_creation_input_tokens\":3,\"cache_read_input_tokens\":5,\"cache_creation\":"
                + "{\"ephemeral_5m_input_tokens\":3,\"ephemeral_1h_input_tokens\":0},\"output_tokens\":8,"
                + "\"service_tier\":\"standard\",\"server_tool_use\":null,\"x\":[1,{\"a\":\"}\"}],\"f\":1.5e3}",
        "{\"prompt_tokens\":3,\"total_tokens\":3}",
        "{}",
        "{\"input_tokens\":10,\"output_tokens\":80,\"output_tokens_details\":{\"thinking_tokens\":50}}",
        "{\"input_tokens\":1500,\"input_tokens_details\":{\"cached_tokens\":1024},\"output_tokens\":90,"
                + "\"output_tokens_details\":{\"reasoning_tokens\":64},\"total_tokens\":1590}",
    })
    void byteReader_agreesWithTheScannerReader(String json) throws Exception {
        UsageCounts bytes = new UsageCounts();
        byte[] b = ("  " + json + "  ").getBytes(StandardCharsets.UTF_8);
        assertThat(bytes.read(b, 2, b.length - 2)).isTrue();
        UsageCounts scanned = scanned(json);
        assertThat(bytes.known()).isEqualTo(scanned.known());
        if (scanned.known()) {
            assertThat(bytes.usage()).isEqualTo(scanned.usage());
        }
    }

    @Test
    void byteReader_reasoningAndCache_mappedLikeTheTranslators() {
        UsageCounts c = new UsageCounts();
        byte[] b = ("{\"prompt_tokens\":100,\"completion_tokens\":20,\"prompt_tokens_details\":{\"cached_tokens\":40},"
                + "\"completion_tokens_details\":{\"reasoning_tokens\":5}}").getBytes(StandardCharsets.UTF_8);
        assertThat(c.read(b, 0, b.length)).isTrue();
        Usage u = c.usage();
        assertThat(u.promptTokens()).isEqualTo(100);
        assertThat(u.cacheRead()).isEqualTo(40);
        assertThat(u.reasoning()).isEqualTo(5);
    }

    /** Each style's usage object gives the five token types, whichever reader reads it (contract 8.8). */
    @ParameterizedTest
    @ValueSource(strings = {
        // chat: prompt_tokens includes the cache reads and writes
        "{\"prompt_tokens\":1500,\"completion_tokens\":90,\"prompt_tokens_details\":{\"cached_tokens\":1000,"
                + "\"cache_write_tokens\":100},\"completion_tokens_details\":{\"reasoning_tokens\":64}}",
        // Anthropic: input_tokens is uncached only; thinking tokens in output_tokens_details
        "{\"input_tokens\":400,\"cache_creation_input_tokens\":100,\"cache_read_input_tokens\":1000,"
                + "\"output_tokens\":90,\"output_tokens_details\":{\"thinking_tokens\":64}}",
    })
    void tokenTypes_eachStyle_sameFiveCounts(String json) throws Exception {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        UsageCounts bytes = new UsageCounts();
        assertThat(bytes.read(b, 0, b.length)).isTrue();
        UsageCounts scanned = scanned(json);
        for (UsageCounts c : new UsageCounts[] {bytes, scanned}) {
            assertThat(c.usage()).isEqualTo(new Usage(400, 90, 100, 1000, 64));
            assertThat(c.usage().promptTokens()).isEqualTo(1500);
            assertThat(c.usage().outputWithoutReasoning()).isEqualTo(26);
        }
    }

    /** The Responses API counts its input like chat (cache reads inside), in Anthropic's field names. */
    @Test
    void tokenTypes_responsesApi_inputIncludesCacheReads() {
        byte[] b = ("{\"input_tokens\":1500,\"input_tokens_details\":{\"cached_tokens\":1000},\"output_tokens\":90,"
                + "\"output_tokens_details\":{\"reasoning_tokens\":64},\"total_tokens\":1590}")
                .getBytes(StandardCharsets.UTF_8);
        UsageCounts c = new UsageCounts();
        assertThat(c.read(b, 0, b.length)).isTrue();
        assertThat(c.usage()).isEqualTo(new Usage(500, 90, 0, 1000, 64));
    }

    @Test
    void tokenTypes_implausibleDetail_marksTheUsageImplausible() {
        byte[] b = "{\"input_tokens\":10,\"output_tokens\":5,\"output_tokens_details\":{\"thinking_tokens\":-3}}"
                .getBytes(StandardCharsets.UTF_8);
        UsageCounts c = new UsageCounts();
        assertThat(c.read(b, 0, b.length)).isTrue();
        assertThat(c.implausible()).isTrue();
        assertThat(c.implausibleField()).isEqualTo("thinking_tokens");
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"prompt_tokens\":", "{\"prompt_tokens\" 3}", "[1]", "{\"a\":\"unterminated}", ""})
    void byteReader_malformed_isRefused(String json) {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        assertThat(new UsageCounts().read(b, 0, b.length)).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"prompt_tokens\":1000000000000000000,\"completion_tokens\":7}",
        "{\"prompt_tokens\":12,\"completion_tokens\":9223372036854775807}",
        "{\"prompt_tokens\":12,\"completion_tokens\":99999999999999999999999}",
        "{\"prompt_tokens\":-12,\"completion_tokens\":7}",
        "{\"prompt_tokens\":1e18,\"completion_tokens\":7}",
        "{\"prompt_tokens\":12.5,\"completion_tokens\":7}",
        "{\"prompt_tokens\":12,\"completion_tokens\":7,\"prompt_tokens_details\":{\"cached_tokens\":-1}}",
        "{\"prompt_tokens\":12,\"completion_tokens\":7,\"completion_tokens_details\":{\"reasoning_tokens\":2e30}}",
        "{\"input_tokens\":9223372036854775807,\"output_tokens\":8}",
        "{\"input_tokens\":10,\"cache_read_input_tokens\":100000001,\"output_tokens\":8}",
        "{\"input_tokens\":10,\"cache_creation_input_tokens\":-0.5,\"output_tokens\":8}",
    })
    void absurdCount_bothReaders_markTheUsageImplausibleAndKeepItOut(String json) throws Exception {
        UsageCounts bytes = new UsageCounts();
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        assertThat(bytes.read(b, 0, b.length)).isTrue();
        UsageCounts scanned = scanned(json);

        for (UsageCounts c : new UsageCounts[] {bytes, scanned}) {
            assertThat(c.implausible()).isTrue();
            assertThat(json).contains("\"" + c.implausibleField() + "\":");
            Usage u = c.usage();
            // What was believed stays apart from what was not: no count above the ceiling, none below zero.
            for (long n : new long[] {u.input(), u.output(), u.cacheCreation(), u.cacheRead(), u.reasoning()}) {
                assertThat(n).isBetween(0L, TokenCount.MAX);
            }
        }
        assertThat(bytes.implausibleField()).isEqualTo(scanned.implausibleField());
        assertThat(bytes.usage()).isEqualTo(scanned.usage());
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"prompt_tokens\":12.0,\"completion_tokens\":7e0,\"total_tokens\":19}",
        "{\"prompt_tokens\":100000000,\"completion_tokens\":0,\"total_tokens\":1e30}",
        "{\"prompt_tokens\":12,\"completion_tokens\":7,\"prompt_tokens_details\":{\"cached_tokens\":null,"
                + "\"audio_tokens\":-5},\"extra\":-99999999999999999999999}",
    })
    void wholeNumbersInRange_andFieldsNotCounted_areBelieved(String json) throws Exception {
        UsageCounts bytes = new UsageCounts();
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        assertThat(bytes.read(b, 0, b.length)).isTrue();
        UsageCounts scanned = scanned(json);
        assertThat(bytes.implausible()).isFalse();
        assertThat(scanned.implausible()).isFalse();
        assertThat(bytes.usage()).isEqualTo(scanned.usage());
        assertThat(bytes.usage().promptTokens()).isIn(12L, 100_000_000L);
    }

    /** The usage read by {@link UsageCounts#read(JsonScanner)}, the stream tracker's reader. */
    private static UsageCounts scanned(String json) throws Exception {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        JsonScanner s = new JsonScanner(1000, 1000);
        s.reset(b, 0, b.length);
        s.next();
        UsageCounts c = new UsageCounts();
        c.read(s);
        return c;
    }
}
