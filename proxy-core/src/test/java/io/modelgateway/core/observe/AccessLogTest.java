package io.modelgateway.core.observe;

import io.modelgateway.codecs.translate.Usage;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.testing.Eventually;
import java.io.IOException;
import java.io.StringWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AccessLogTest {
    private static final List<String> FIELDS = List.of("ts", "request_id", "endpoint", "key", "model", "provider",
            "deployment", "stream", "status", "outcome", "input_tokens", "output_tokens", "cached_input_tokens",
            "cache_write_tokens", "reasoning_tokens", "usage", "cost_usd", "ttft_ms", "gateway_ms",
            "upstream_ms", "duration_ms", "bytes_in", "bytes_out", "limit");

    private static String logOf(ExchangeRecord... records) {
        StringWriter out = new StringWriter();
        try (AccessLog log = new AccessLog(out, 64)) {
            for (ExchangeRecord r : records) {
                log.ended(r);
            }
        }
        return out.toString();
    }

    @Test
    void streamedExchange_isOneExactLine() {
        String line = logOf(Records.stream("team-a", "gpt-4o-mini"));

        assertThat(line).isEqualTo("{\"ts\":\"2023-11-14T22:13:20.123Z\",\"request_id\":\"req_abc\","
                + "\"endpoint\":\"chat_completions\",\"key\":\"team-a\",\"model\":\"gpt-4o-mini\","
                + "\"provider\":\"openai\",\"deployment\":\"gpt-4o-mini-2024-07-18\",\"stream\":true,\"status\":200,"
                + "\"outcome\":\"done\",\"input_tokens\":10,\"output_tokens\":20,\"cached_input_tokens\":0,"
                + "\"cache_write_tokens\":0,\"reasoning_tokens\":0,\"usage\":\"upstream\","
                + "\"cost_usd\":null,\"ttft_ms\":12.345,\"gateway_ms\":1.500,\"upstream_ms\":4.500,\"duration_ms\":1234.567,\"bytes_in\":321,"
                + "\"bytes_out\":150,\"limit\":null}\n");
    }

    @Test
    void unknownParts_areNull() {
        String line = logOf(Records.bare(null, 0, Outcome.CANCELLED));

        assertThat(line).isEqualTo("{\"ts\":\"2023-11-14T22:13:20.123Z\",\"request_id\":\"req_bare\","
                + "\"endpoint\":\"models\",\"key\":null,\"model\":null,\"provider\":null,\"deployment\":null,"
                + "\"stream\":false,\"status\":0,\"outcome\":\"cancelled\",\"input_tokens\":0,\"output_tokens\":0,"
                + "\"cached_input_tokens\":0,\"cache_write_tokens\":0,\"reasoning_tokens\":0,\"usage\":\"none\",\"cost_usd\":null,\"ttft_ms\":null,\"gateway_ms\":null,\"upstream_ms\":null,\"duration_ms\":3.000,\"bytes_in\":0,"
                + "\"bytes_out\":0,\"limit\":null}\n");
    }

    /** The token types: input and output are every token; cache reads, cache writes and reasoning are parts. */
    @Test
    void tokenTypes_areFieldsOfTheLine() throws IOException {
        ExchangeRecord r = Records.stream("team-a", "m");
        r.usage(new Usage(400, 90, 100, 1000, 64), ExchangeRecord.UsageSource.UPSTREAM);
        JsonNode json = new ObjectMapper().readTree(logOf(r));

        assertThat(json.get("input_tokens").asLong()).isEqualTo(1500);
        assertThat(json.get("cached_input_tokens").asLong()).isEqualTo(1000);
        assertThat(json.get("cache_write_tokens").asLong()).isEqualTo(100);
        assertThat(json.get("output_tokens").asLong()).isEqualTo(90);
        assertThat(json.get("reasoning_tokens").asLong()).isEqualTo(64);
    }

    @Test
    void limitedExchange_namesTheLimit() throws IOException {
        String line = logOf(Records.limited("team-b", "m", "requests_per_minute"));
        JsonNode json = new ObjectMapper().readTree(line);

        assertThat(json.get("limit").asText()).isEqualTo("requests_per_minute");
        assertThat(json.get("status").asInt()).isEqualTo(429);
        assertThat(json.get("outcome").asText()).isEqualTo("limited");
        // the 429 body went out 1.6 ms after the request; no upstream was asked
        assertThat(line).contains("\"ttft_ms\":1.600,\"gateway_ms\":1.500,\"upstream_ms\":null,\"duration_ms\":2.000,");
    }

    @Test
    void strings_areEscapedAndStayOneLine() throws IOException {
        String nasty = "a\"b\\c\nd\te\u0001é😀";
        ExchangeRecord r = Records.stream("key \"x\"\r\n", nasty);

        String log = logOf(r);

        assertThat(log).endsWith("\n");
        assertThat(log.indexOf('\n')).isEqualTo(log.length() - 1);
        assertThat(log).contains("\"model\":\"a\\\"b\\\\c\\nd\\te\\u0001é😀\"");
        JsonNode json = new ObjectMapper().readTree(log);
        assertThat(json.get("model").asText()).isEqualTo(nasty);
        assertThat(json.get("key").asText()).isEqualTo("key \"x\"\r\n");
    }

    @Test
    void line_hasExactlyTheListedFieldsInOrder() throws IOException {
        // The record carries key names only; a line with no other field cannot carry a key value.
        for (String line : logOf(Records.stream("team-a", "m"), Records.limited("k", "m", "l"),
                Records.bare(Endpoint.MESSAGES, 404, Outcome.REJECTED)).split("\n")) {
            List<String> names = new ArrayList<>();
            new ObjectMapper().readTree(line).fieldNames().forEachRemaining(names::add);
            assertThat(names).containsExactlyElementsOf(FIELDS);
        }
    }

    @Test
    void usd_plainWithAtMostNineDecimals() {
        assertThat(AccessLog.usd(0)).isEqualTo("0");
        assertThat(AccessLog.usd(0.000123)).isEqualTo("0.000123");
        assertThat(AccessLog.usd(2.5)).isEqualTo("2.5");
        assertThat(AccessLog.usd(1e-12)).isEqualTo("0");
        assertThat(AccessLog.usd(0.0000000015)).isEqualTo("0.000000002");
        assertThat(AccessLog.usd(12345678.9)).isEqualTo("12345678.9");
    }

    @Test
    void millis_haveThreeDecimals() {
        assertThat(AccessLog.millis(0)).isEqualTo("0.000");
        assertThat(AccessLog.millis(999)).isEqualTo("0.000");
        assertThat(AccessLog.millis(1_000)).isEqualTo("0.001");
        assertThat(AccessLog.millis(12_345_678)).isEqualTo("12.345");
        assertThat(AccessLog.millis(120_000_000_000L)).isEqualTo("120000.000");
        assertThat(AccessLog.millis(-2_500_000)).isEqualTo("-2.500");
    }

    @Test
    void close_flushesEverythingQueued() {
        StringWriter out = new StringWriter();
        AccessLog log = new AccessLog(out, 4096);
        for (int i = 0; i < 1000; i++) {
            log.ended(Records.stream("k", "m"));
        }

        log.close();

        assertThat(out.toString().split("\n")).hasSize(1000);
        assertThat(log.written()).isEqualTo(1000);
        assertThat(log.dropped()).isZero();
        log.close(); // twice is fine
    }

    @Test
    void afterClose_linesAreDroppedAndCounted() {
        StringWriter out = new StringWriter();
        AccessLog log = new AccessLog(out, 16);
        log.close();

        log.ended(Records.stream("k", "m"));

        assertThat(log.dropped()).isEqualTo(1);
        assertThat(out.toString()).isEmpty();
    }

    @Test
    void fullQueue_dropsAndCountsWithoutBlocking() throws Exception {
        BlockingWriter out = new BlockingWriter();
        AccessLog log = new AccessLog(out, 8);
        log.ended(Records.stream("k", "m"));
        // The writer thread has taken the first line and is stuck writing it: nothing drains the queue now.
        assertThat(out.entered.await(5, TimeUnit.SECONDS)).isTrue();

        long start = System.nanoTime();
        for (int i = 0; i < 1000; i++) {
            log.ended(Records.stream("k", "m"));
        }
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(log.dropped()).isEqualTo(1000 - 8);
        assertThat(elapsedMs).isLessThan(2000);

        out.release.countDown();
        log.close();
        assertThat(log.written()).isEqualTo(1 + 8);
        assertThat(out.text().split("\n")).hasSize(1 + 8);
    }

    @Test
    void writerThread_writesWithoutClose() throws Exception {
        StringWriter out = new StringWriter();
        try (AccessLog log = new AccessLog(out, 16)) {
            log.ended(Records.stream("k", "m"));
            Eventually.until(Duration.ofSeconds(5), () -> out.toString().endsWith("}\n"));
        }
    }

    @Test
    void fileTarget_appendsAndCreates(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("access.log");
        try (AccessLog log = AccessLog.open(file.toString())) {
            log.ended(Records.stream("k", "m"));
        }
        try (AccessLog log = AccessLog.open(file.toString())) {
            log.ended(Records.limited("k", "m", "l"));
        }
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).contains("\"request_id\":\"req_abc\"");
        assertThat(lines.get(1)).contains("\"request_id\":\"req_lim\"");
    }

    @Test
    void off_doesNothing() {
        try (AccessLog log = AccessLog.open("off")) {
            log.ended(Records.stream("k", "m"));
            assertThat(log.enabled()).isFalse();
            assertThat(log.dropped()).isZero();
        }
    }

    @Test
    void writeFailure_dropsThatBatchAndRecovers() throws Exception {
        FailingOnceWriter out = new FailingOnceWriter();
        try (AccessLog log = new AccessLog(out, 16)) {
            log.ended(Records.stream("k", "m"));
            Eventually.until(Duration.ofSeconds(5), () -> log.dropped() == 1);
            log.ended(Records.limited("k", "m", "l"));
            Eventually.until(Duration.ofSeconds(5), () -> log.written() == 1);
        }
        String text = out.toString();
        assertThat(text.split("\n")).hasSize(1);
        assertThat(new ObjectMapper().readTree(text).get("request_id").asText()).isEqualTo("req_lim");
    }

    /** A target that fails its first write (a full disk that is then cleared). */
    private static final class FailingOnceWriter extends StringWriter {
        private boolean failed;

        @Override
        public synchronized void write(char[] cbuf, int off, int len) {
            if (!failed) {
                failed = true;
                throw new java.io.UncheckedIOException(new IOException("disk full"));
            }
            super.write(cbuf, off, len);
        }

        @Override
        public synchronized String toString() {
            return super.toString();
        }
    }

    /** A target whose first write blocks until released, like a stuck disk or a full pipe. */
    private static final class BlockingWriter extends Writer {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        private final StringBuilder text = new StringBuilder();

        @Override
        public void write(char[] cbuf, int off, int len) throws IOException {
            entered.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
            synchronized (text) {
                text.append(cbuf, off, len);
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }

        String text() {
            synchronized (text) {
                return text.toString();
            }
        }
    }
}
