package io.modelgateway.bench.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The soak's per-workload verdict on hand-made results: what passes, and each way to fail. */
class SoakReportTest {
    private static final String WORKLOADS = """
            chat\tsoak-chat\tok\t200\tdone\tnon-stream chat
            cut\tsoak-cut\tstream_error\t200\tupstream_error\tstreams cut by the upstream
            slow\tsoak-slow\tstatus_504\t504\tupstream_error\tfirst byte too late
            """;
    private static final String GIVEUP = "giveup\tsoak-giveup\ttimeout\t200\tcancelled\tcallers give up mid-stream\n";

    @TempDir
    Path dir;

    @Test
    void judge_everyWorkloadAsExpected_passes() throws IOException {
        write(WORKLOADS + GIVEUP);
        loadgen("chat", 100, "{}", "{\"200\": 101}", 1);
        loadgen("cut", 0, "{\"stream_error\": 40}", "{\"200\": 40}", 0);
        loadgen("slow", 0, "{\"status_504\": 10}", "{\"504\": 10}", 0);
        loadgen("giveup", 0, "{\"timeout\": 38}", "{\"200\": 18}", 2);
        // One chat request was in flight when the load generator stopped (logged as cancelled), another ended
        // between its stop and its count (logged done, counted nowhere).
        log("soak-chat", 200, "done", 101);
        log("soak-chat", 200, "cancelled", 1);
        log("soak-cut", 200, "upstream_error", 40);
        log("soak-slow", 504, "upstream_error", 10);
        // Twenty callers gave up before the head (more than the 16 connections could leave at the stop): the gateway had no status to log (the loadgen saw none either).
        log("soak-giveup", 200, "cancelled", 20);
        log("soak-giveup", 0, "cancelled", 20);
        metrics("soak-chat", 102, "soak-cut", 40, "soak-slow", 10, "soak-giveup", 40);
        // The prewarm's exchanges, under another key, are not the measured load's.
        Files.writeString(dir.resolve("access.log"), "{\"key\":\"warmup\",\"model\":\"soak-chat\",\"status\":503,"
                + "\"outcome\":\"upstream_error\"}\n", java.nio.file.StandardOpenOption.APPEND);
        Files.writeString(dir.resolve("metrics.txt"), "gateway_requests_total{endpoint=\"chat_completions\","
                + "model=\"soak-chat\",key=\"warmup\",status=\"200\",outcome=\"done\"} 500.0\n",
                java.nio.file.StandardOpenOption.APPEND);

        SoakReport.Report r = SoakReport.judge(dir);

        assertThat(r.failed()).as(r.text()).isFalse();
        assertThat(r.text()).contains("| chat | 100 req/s, 8 conn., 60 s | ok @ 200 / done | 200=101 | ok=100 | 1 |"
                + " 200 cancelled × 1, 200 done × 101 | 102 | pass |");
        assertThat(r.text()).doesNotContain("FAIL");
    }

    @Test
    void judge_a5xxTheFaultsDidNotAskFor_failsTheWorkload() throws IOException {
        write(WORKLOADS);
        loadgen("chat", 98, "{\"status_503\": 2}", "{\"200\": 98, \"503\": 2}", 0);
        loadgen("cut", 0, "{\"stream_error\": 40}", "{\"200\": 40}", 0);
        loadgen("slow", 0, "{\"status_504\": 10}", "{\"504\": 10}", 0);
        log("soak-chat", 200, "done", 98);
        log("soak-chat", 503, "upstream_error", 2);
        log("soak-cut", 200, "upstream_error", 40);
        log("soak-slow", 504, "upstream_error", 10);
        metrics("soak-chat", 100, "soak-cut", 40, "soak-slow", 10);

        SoakReport.Report r = SoakReport.judge(dir);

        assertThat(r.failed()).isTrue();
        assertThat(r.text()).contains("- chat: callers got 2 answers with status 503 (a 5xx the faults did not ask for)",
                "- chat: callers got 2 × status_503",
                "- chat: the gateway logged 2 × 503 upstream_error (a 5xx the faults did not ask for)");
        assertThat(r.text()).doesNotContain("- cut:", "- slow:");
    }

    @Test
    void judge_faultThatDidNotShow_orWholeAnswersWhereNoneShouldBe_fails() throws IOException {
        write(WORKLOADS);
        loadgen("chat", 10, "{}", "{\"200\": 10}", 0);
        loadgen("cut", 5, "{\"stream_cut\": 3}", "{\"200\": 8}", 0);
        loadgen("slow", 0, "{}", "{}", 0);
        log("soak-chat", 200, "done", 10);
        log("soak-cut", 200, "upstream_error", 8);
        metrics("soak-chat", 10, "soak-cut", 8);

        SoakReport.Report r = SoakReport.judge(dir);

        assertThat(r.failed()).isTrue();
        assertThat(r.text()).contains("- cut: callers got 3 × stream_cut",
                "- cut: no stream_error at all: the fault did not show",
                "- cut: 5 answered in full where every answer should have been stream_error",
                "- slow: no status_504 at all: the fault did not show");
        assertThat(r.text()).doesNotContain("- chat:");
    }

    @Test
    void judge_accessLogOrMetricsOutOfStepWithTheCallers_fails() throws IOException {
        write(WORKLOADS);
        loadgen("chat", 100, "{}", "{\"200\": 100}", 2);
        loadgen("cut", 0, "{\"stream_error\": 40}", "{\"200\": 40}", 0);
        loadgen("slow", 0, "{\"status_504\": 10}", "{\"504\": 10}", 0);
        log("soak-chat", 200, "done", 90);      // ten answered requests never logged
        log("soak-cut", 200, "upstream_error", 40);
        log("soak-cut", 200, "cancelled", 20);  // far more cancellations than connections left at the stop
        log("soak-slow", 504, "upstream_error", 10);
        metrics("soak-chat", 90, "soak-cut", 59, "soak-slow", 10);

        SoakReport.Report r = SoakReport.judge(dir);

        assertThat(r.failed()).isTrue();
        assertThat(r.text()).contains("- chat: the access log has 90 lines for 100 answered requests",
                "- cut: the access log has 60 lines for 40 answered requests on 8 connections",
                "- cut: the gateway logged 20 cancelled exchanges; the load generator closed at most 8 at its stop",
                "- cut: gateway_requests_total says 59, the access log 60");
        assertThat(r.text()).doesNotContain("- slow:");
    }

    /** CI cannot afford the soak itself; it can check that the script (and what it sources) still parses. */
    @Test
    void soakScript_isValidBash() throws Exception {
        for (String script : new String[] {"../scripts/soak", "../scripts/lib.sh"}) {
            Process p = new ProcessBuilder("bash", "-n", script).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(p.waitFor()).as(script + ": " + out).isZero();
        }
    }

    private void write(String workloads) throws IOException {
        Files.writeString(dir.resolve("workloads.tsv"), workloads);
    }

    private void loadgen(String name, long completed, String errors, String statuses, long inFlight) throws IOException {
        Files.writeString(dir.resolve(name + ".json"), """
                {"mode": "open", "rate": 100.0, "connections": 8, "duration_s": 60.0, "requests": %d,
                 "errors_by_kind": %s, "statuses": %s, "in_flight_at_end": %d}
                """.formatted(completed, errors, statuses, inFlight));
    }

    private void log(String model, int status, String outcome, int lines) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < lines; i++) {
            sb.append("{\"ts\":\"2026-11-23T00:01:00.202Z\",\"endpoint\":\"chat_completions\",\"key\":\"soak\",\"model\":\"")
                    .append(model).append("\",\"status\":").append(status).append(",\"outcome\":\"").append(outcome)
                    .append("\"}\n");
        }
        Files.writeString(dir.resolve("access.log"), sb, java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.APPEND);
    }

    private void metrics(Object... modelAndCount) throws IOException {
        StringBuilder sb = new StringBuilder("# TYPE gateway_requests_total counter\n");
        for (int i = 0; i < modelAndCount.length; i += 2) {
            // Split over two label sets, as the gateway's counters are: the report sums them.
            long n = ((Number) modelAndCount[i + 1]).longValue();
            sb.append("gateway_requests_total{endpoint=\"chat_completions\",model=\"").append(modelAndCount[i])
                    .append("\",key=\"soak\",status=\"200\",outcome=\"done\"} ").append(n - n / 2).append('\n');
            sb.append("gateway_requests_total{endpoint=\"chat_completions\",model=\"").append(modelAndCount[i])
                    .append("\",key=\"soak\",status=\"503\",outcome=\"upstream_error\"} ").append(n / 2).append(".0\n");
        }
        sb.append("gateway_inflight_exchanges 0\n");
        Files.writeString(dir.resolve("metrics.txt"), sb);
    }
}
