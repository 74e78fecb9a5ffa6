package io.modelgateway.bench.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.bench.loadgen.BenchReport.Row;
import org.junit.jupiter.api.Test;

/** The lines of the bench summary that compare Redis limits with local ones (scripts/bench --redis). */
class BenchReportTest {
    private static Row row(String target, double rps, double p50Ms, double cpuUs, long errors) {
        return openRow(target, rps, p50Ms, cpuUs, errors, 0);
    }

    private static Row openRow(String target, double rps, double p50Ms, double cpuUs, long errors, double askedRate) {
        return new Row(target, 2, rps, rps, rps, p50Ms, 2 * p50Ms, 0, 0, cpuUs, errors, -1, -1, askedRate,
                java.util.Map.of());
    }

    @Test
    void sharedLimitsCost_closedLoop_judgesTheCpu_andCallsThePlusP50Queueing() {
        String line = BenchReport.sharedLimitsCost(row("gateway-redis", 9000, 0.600, 55.0, 0),
                row("gateway-jdk17", 10000, 0.500, 50.0, 0));

        assertThat(line).isEqualTo("gateway-redis / gateway-jdk17 (Redis limits / local limits): req/s 0.90×, "
                + "added CPU/request +5.0 µs (+10.0%, target ≤ 15%: met), p50 +100 µs (closed loop: queueing behind "
                + "the rate; the p50 target is judged at a fixed rate)\n");
    }

    @Test
    void sharedLimitsCost_pastTargetsAndErrors_saidSo() {
        String line = BenchReport.sharedLimitsCost(row("gateway-redis", 8000, 0.700, 60.0, 3),
                row("gateway-jdk17", 10000, 0.500, 50.0, 0));

        assertThat(line).contains("added CPU/request +10.0 µs (+20.0%, target ≤ 15%: MISSED)")
                .contains("3 errors: checks Redis did not answer in time were refused");
    }

    @Test
    void sharedLimitsCost_openLoop_judgesTheP50AtTheSameRate() {
        String met = BenchReport.sharedLimitsCost(openRow("gateway-redis", 3990, 0.420, 70.0, 0, 4000),
                openRow("gateway-jdk17", 4000, 0.300, 65.0, 0, 4000));
        String missed = BenchReport.sharedLimitsCost(openRow("gateway-redis", 3990, 0.500, 70.0, 0, 4000),
                openRow("gateway-jdk17", 4000, 0.300, 65.0, 0, 4000));

        assertThat(met).contains("added CPU/request +5.0 µs (+7.7%, below saturation)")
                .contains("added p50 +120 µs at 4000 req/s (target ≤ 150 µs: met)");
        assertThat(missed).contains("added p50 +200 µs at 4000 req/s (target ≤ 150 µs: MISSED)");
    }

    @Test
    void sharedLimitsCost_openLoopRateNotKept_isNotJudged() {
        String line = BenchReport.sharedLimitsCost(openRow("gateway-redis", 3000, 9.0, 70.0, 0, 4000),
                openRow("gateway-jdk17", 4000, 0.300, 65.0, 0, 4000));

        assertThat(line).contains("(target ≤ 150 µs: NOT JUDGED, the rate was not kept)");
        assertThat(BenchReport.rateKept(openRow("gateway-redis", 3000, 9.0, 70.0, 0, 4000)))
                .contains("**RATE NOT KEPT**: gateway-redis made 3000 of the asked 4000 req/s");
        assertThat(BenchReport.rateKept(openRow("gateway-jdk17", 3990, 0.3, 65.0, 0, 4000)))
                .contains("kept the asked 4000 req/s");
    }

    @Test
    void streamsRow_paceKeptOnlyWithTheRateTheGapsAndNoError(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        // 2,000 streams of 40 tokens at 20 tokens/s, 42 events each (role, 40 tokens, finish) over 2 s: 42,000 events/s.
        String kept = BenchReport.streamsRow(result(dir, "a", 40_000, 95_000, 0), "17", 2000, 20, 40, 42, "2000", "300",
                "80", "200");
        String slow = BenchReport.streamsRow(result(dir, "b", 39_000, 60_000, 0), "17", 2000, 20, 40, 42, "2000", "300",
                "80", "200");
        String bursty = BenchReport.streamsRow(result(dir, "c", 41_500, 140_000, 0), "17", 2000, 20, 40, 42, "2000",
                "300", "80", "200");
        String failing = BenchReport.streamsRow(result(dir, "d", 41_500, 60_000, 3), "17", 2000, 20, 40, 42, "2000",
                "300", "80", "200");

        assertThat(kept).startsWith("| 17 | 2000 | 2000 | 0 |").contains("| 40000 (42000) |").contains("| kept |");
        assertThat(slow).contains("| 39000 (42000) |").contains("| not kept |"); // 92.9 %: one event per token would
                                                                              // have asked 40,000 and read 97.5 %
        assertThat(bursty).contains("| not kept |"); // inter-token p99 140 ms, over twice the 50 ms gap
        assertThat(failing).contains("| not kept |");
        // Streams of another shape than the asked rate assumes are not judged.
        java.nio.file.Path other = dir.resolve("e.json");
        java.nio.file.Files.writeString(other, java.nio.file.Files.readString(result(dir, "e", 40_000, 60_000, 0))
                .replace("{\"errors\"", "{\"events_per_stream\":41.0,\"errors\""));
        assertThat(BenchReport.streamsRow(other, "17", 2000, 20, 40, 42, "2000", "300", "80", "200"))
                .contains("| not judged (41.0 events per stream, not 42) |");
    }

    @Test
    void render_comparesTheFloorsWithNginxAsItDoesTheGateway(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Files.writeString(dir.resolve("workloads.tsv"), "chat64\tnon-stream chat\n");
        closedLoop(dir, "direct", 40_000, -1);
        closedLoop(dir, "nginx", 20_000, 40.0);
        closedLoop(dir, "floor-relay", 19_000, 36.0);
        closedLoop(dir, "gateway-jdk25", 15_000, 60.0);
        closedLoop(dir, "other", 18_000, 50.0);

        String out = BenchReport.render(dir);

        assertThat(out).contains("floor-relay / nginx: req/s 0.95×, CPU/request 0.90×")
                .contains("gateway-jdk25 / nginx: req/s 0.75×, CPU/request 1.50×")
                .contains("(ceiling: direct ran 2.1× floor-relay's rate; proxy core busy: floor-relay 68 %, nginx 80 %)")
                .doesNotContain("other / nginx");
    }

    @Test
    void render_upstreamBound_doesNotCount_andSaysHowBusyEachProxysCoreWas(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Files.writeString(dir.resolve("workloads.tsv"), "chat64\tnon-stream chat\n");
        closedLoop(dir, "direct", 60_000, -1);
        closedLoop(dir, "nginx", 39_000, 25.0);
        closedLoop(dir, "gateway-jdk25", 40_000, 24.5);

        String out = BenchReport.render(dir);

        // 40,000 req/s at 24.5 µs each is 98 % of a core; 39,000 at 25.0 is 97.5 %
        assertThat(out).contains("**UPSTREAM-BOUND**: direct ran only 1.5× gateway-jdk25's rate (under 2×): this row "
                + "does not count; proxy core busy: gateway-jdk25 98 %, nginx 98 %");
    }

    @Test
    void render_givesEachRoundsRatioBesideTheMeans(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Files.writeString(dir.resolve("workloads.tsv"), "chat64\tnon-stream chat\n"
                + "stream64p\tchat stream, one event per write (paced)\n");
        // Rounds written out of order, and a tenth round: the pairs are made by round number, not by file order.
        for (int round : new int[] {10, 2, 1}) {
            java.nio.file.Files.writeString(dir.resolve("chat64.nginx.r" + round + ".json"),
                    round(20_000, round == 10 ? 30.0 : 40.0, 0));
            java.nio.file.Files.writeString(dir.resolve("chat64.gateway-jdk25.r" + round + ".json"),
                    round(15_000, round == 1 ? 60.0 : round == 2 ? 80.0 : 45.0, 0));
        }
        // Paced: nginx passes 50 events per stream, the gateway 48 (it drops the usage chunk it asked for).
        java.nio.file.Files.writeString(dir.resolve("stream64p.nginx.r1.json"), round(600, 1000.0, 30_000));
        java.nio.file.Files.writeString(dir.resolve("stream64p.nginx.r2.json"), round(600, 1100.0, 30_000));
        java.nio.file.Files.writeString(dir.resolve("stream64p.gateway-jdk25.r1.json"), round(600, 1152.0, 28_800));
        java.nio.file.Files.writeString(dir.resolve("stream64p.gateway-jdk25.r2.json"), round(600, 1320.0, 28_800));
        // A target with one round has no spread to show.
        java.nio.file.Files.writeString(dir.resolve("stream64p.gateway-base-abc.r1.json"), round(600, 1200.0, 28_800));

        String out = BenchReport.render(dir);

        // means 61.7 / 36.7 µs; rounds 60/40, 80/40, 45/30
        assertThat(out).contains("gateway-jdk25 / nginx: req/s 0.75×, CPU/request 1.68× (by round: 1.50×, 2.00×, 1.50×)");
        // per event: rounds 24.0/20.0 and 27.5/22.0 µs; the means 25.75/21.0
        assertThat(out).contains("gateway-jdk25 / nginx: req/s 1.00×, CPU/request 1.18×, CPU/event 1.23× "
                + "(by round: 1.20×, 1.25×)");
        assertThat(out).contains("gateway-base-abc / nginx: req/s 1.00×, CPU/request 1.14×, CPU/event 1.19×, events/s");
    }

    @Test
    void render_pacedWorkload_saysWhatShareOfTheAskedPaceDirectDelivered(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        // 64 connections, streams of 51 ticks of 1 ms: 1,254.9 streams/s asked
        String out = renderStream64p(dir, "\t1\t64\t51");

        // direct's 1,240 streams/s (62,000 events/s of 50 a stream) are 98.8 % of that, shown rounded down; the extra
        // columns are not part of the description
        assertThat(out).contains("### stream64p — chat stream, 50 events one per write 1 ms apart (paced), "
                + "64 connections (1 round)\n")
                .contains("  (paced: the rate is the upstream's pace; direct ran 98 % of the asked 1,255 "
                        + "streams/s; direct 1240 req/s, gateway-jdk25 1200)\n")
                .doesNotContain("RIG-BOUND");
    }

    @Test
    void render_pacedWorkloadDirectCouldNotKeep_isRigBound(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        // 1,000 connections, streams of 51 ticks of 20 ms: 980.4 streams/s asked; the rig ran 650 (32,500 events/s)
        java.nio.file.Files.writeString(dir.resolve("workloads.tsv"), "chat64\tnon-stream chat, 64 connections\t\t64\n"
                + "paced1000\tchat stream, 1,000 at once, one event per write 20 ms apart (paced)\t20\t1000\t51\n");
        closedLoop(dir, "direct", 40_000, -1);
        closedLoop(dir, "nginx", 20_000, 40.0);
        closedLoop(dir, "gateway-jdk25", 15_000, 60.0);
        paced(dir, "paced1000", 32_500, 25_000, 31_000);

        String out = BenchReport.render(dir);

        assertThat(out).contains("  **RIG-BOUND**: direct ran only 66 % of the asked 980 streams/s: the rig, "
                + "not the proxy, set the rates, so this row's req/s ratio does not count (its CPU per event "
                + "still does)\n")
                .doesNotContain("(paced:")
                // the closed-loop workload beside it, its gap column empty, is judged as before
                .contains("(ceiling: direct ran 2.7× gateway-jdk25's rate");
    }

    @Test
    void render_pacedWorkloadOfAnOldResultsDir_givesTheRatesAlone(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        // written before the bench recorded the ticks per stream: four columns (two before it recorded the gap)
        String out = renderStream64p(dir, "\t1\t64");

        assertThat(out).contains("  (paced: the rate is the upstream's pace; direct 1240 req/s, gateway-jdk25 1200)\n")
                .doesNotContain("asked").doesNotContain("RIG-BOUND");
    }

    /**
     * The report of one round of stream64p, direct at 62,000 events/s, the gateway at 60,000 and nginx at 61,000,
     * with {@code columns} after its description in {@code workloads.tsv}.
     */
    private static String renderStream64p(java.nio.file.Path dir, String columns) throws java.io.IOException {
        java.nio.file.Files.writeString(dir.resolve("workloads.tsv"),
                "stream64p\tchat stream, 50 events one per write 1 ms apart (paced), 64 connections" + columns + "\n");
        paced(dir, "stream64p", 62_000, 60_000, 61_000);
        return BenchReport.render(dir);
    }

    /** One round of a paced workload, 50 events per stream: direct, nginx and gateway-jdk25 at these events/s. */
    private static void paced(java.nio.file.Path dir, String workload, double direct, double gateway, double nginx)
            throws java.io.IOException {
        java.nio.file.Files.writeString(dir.resolve(workload + ".direct.r1.json"), "{\"requests\":1000,"
                + "\"requests_per_second\":" + direct / 50 + ",\"events_per_second\":" + direct + ",\"errors\":0,"
                + "\"warmup_errors\":0,\"latency_us\":{\"p50\":50000,\"p99\":52000}}");
        java.nio.file.Files.writeString(dir.resolve(workload + ".nginx.r1.json"), round(nginx / 50, 1000.0, nginx));
        java.nio.file.Files.writeString(dir.resolve(workload + ".gateway-jdk25.r1.json"),
                round(gateway / 50, 1200.0, gateway));
    }

    private static String round(double rps, double cpuUs, double eventsPerSecond) {
        return "{\"requests\":1000,\"requests_per_second\":" + rps + ",\"events_per_second\":" + eventsPerSecond
                + ",\"errors\":0,\"warmup_errors\":0,\"latency_us\":{\"p50\":1000,\"p99\":2000},"
                + "\"cpu\":{\"cpu_us_per_request\":" + cpuUs + "}}";
    }

    private static void closedLoop(java.nio.file.Path dir, String target, double rps, double cpuUs)
            throws java.io.IOException {
        java.nio.file.Files.writeString(dir.resolve("chat64." + target + ".r1.json"), "{\"requests\":1000,"
                + "\"requests_per_second\":" + rps + ",\"errors\":0,\"warmup_errors\":0,"
                + "\"latency_us\":{\"p50\":1000,\"p99\":2000}"
                + (cpuUs > 0 ? ",\"cpu\":{\"cpu_us_per_request\":" + cpuUs + "}" : "") + "}");
    }

    private static java.nio.file.Path result(java.nio.file.Path dir, String name, double eventsPerSecond,
            double itlP99Us, long errors) throws java.io.IOException {
        java.nio.file.Path f = dir.resolve(name + ".json");
        java.nio.file.Files.writeString(f, "{\"errors\":" + errors + ",\"warmup_errors\":0,\"requests\":1000,"
                + "\"events_per_second\":" + eventsPerSecond + ",\"ttft_us\":{\"p50\":1000,\"p99\":2000},"
                + "\"itl_us\":{\"p50\":50000,\"p99\":" + itlP99Us + "}}");
        return f;
    }
}
