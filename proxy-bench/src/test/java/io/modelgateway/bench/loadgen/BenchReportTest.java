package io.modelgateway.bench.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.bench.loadgen.BenchReport.Row;
import org.junit.jupiter.api.Test;

/** The line of the bench summary that compares Redis limits with local ones (scripts/bench --redis). */
class BenchReportTest {
    private static Row row(String target, double rps, double p50Ms, double cpuUs, long errors) {
        return new Row(target, 2, rps, rps, rps, p50Ms, 2 * p50Ms, 0, 0, cpuUs, errors, -1, -1);
    }

    @Test
    void sharedLimitsCost_withinTargets_addedCpuAndP50AgainstTheLocalGateway() {
        String line = BenchReport.sharedLimitsCost(row("gateway-redis", 9000, 0.600, 55.0, 0),
                row("gateway-jdk17", 10000, 0.500, 50.0, 0));

        assertThat(line).isEqualTo("gateway-redis / gateway-jdk17 (Redis limits / local limits): req/s 0.90×, "
                + "added CPU/request +5.0 µs (+10.0%, target ≤ 15%: met), added p50 +100 µs (target ≤ 150 µs: met)\n");
    }

    @Test
    void sharedLimitsCost_pastTargetsAndErrors_saidSo() {
        String line = BenchReport.sharedLimitsCost(row("gateway-redis", 8000, 0.700, 60.0, 3),
                row("gateway-jdk17", 10000, 0.500, 50.0, 0));

        assertThat(line).contains("added CPU/request +10.0 µs (+20.0%, target ≤ 15%: MISSED)")
                .contains("added p50 +200 µs (target ≤ 150 µs: MISSED)")
                .contains("3 errors: checks Redis did not answer in time were refused");
    }
}
