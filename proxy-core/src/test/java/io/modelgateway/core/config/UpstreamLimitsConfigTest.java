package io.modelgateway.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class UpstreamLimitsConfigTest {
    static final String REST = ServerConfigTest.REST;

    private static GatewayConfig parse(String yaml) throws ConfigException {
        return ConfigLoader.parse(yaml, "test.yaml", Map.of("K", "sk-k", "BUDGET", "1073741824"), null);
    }

    @Test
    void absent_defaults() throws Exception {
        UpstreamLimitsConfig d = parse(REST).upstreamLimits();
        assertThat(d).isEqualTo(UpstreamLimitsConfig.DEFAULT);
        assertThat(d.maxErrorBodyBytes()).isEqualTo(64 * 1024);
        assertThat(d.maxSseEventBytes()).isEqualTo(4 * 1024 * 1024);
        assertThat(d.maxCollectedBytes()).isEqualTo(16 * 1024 * 1024);
        assertThat(d.collectedBudgetBytes()).isEqualTo(256L * 1024 * 1024);
    }

    @Test
    void allFields_read_alsoFromTheEnvironment() throws Exception {
        UpstreamLimitsConfig u = parse("upstream_limits: {max_error_body_bytes: 2048, max_sse_event_bytes: 65536,"
                + " max_collected_bytes: 1048576, collected_budget_bytes: \"${BUDGET}\"}\n" + REST).upstreamLimits();
        assertThat(u).isEqualTo(new UpstreamLimitsConfig(2048, 65536, 1048576, 1L << 30));
    }

    @Test
    void collectedCapRaisedPastTheDefaultBudget_budgetFollowsIt() throws Exception {
        UpstreamLimitsConfig u = parse("upstream_limits: {max_collected_bytes: 536870912}\n" + REST).upstreamLimits();
        assertThat(u.collectedBudgetBytes()).isEqualTo(536870912L);
    }

    @Test
    void badFieldOrValue_namesTheFieldAndLine() {
        assertThatThrownBy(() -> parse("upstream_limits: {max_sse_event_byte: 1}\n" + REST))
                .hasMessageStartingWith("upstream_limits.max_sse_event_byte: unknown field (did you mean "
                        + "max_sse_event_bytes?)");
        assertThatThrownBy(() -> parse("upstream_limits: {max_sse_event_bytes: 100}\n" + REST))
                .hasMessage("upstream_limits.max_sse_event_bytes: must be between 16384 and 268435456 (test.yaml:1)");
        assertThatThrownBy(() -> parse("upstream_limits: {max_error_body_bytes: 0}\n" + REST))
                .hasMessageStartingWith("upstream_limits.max_error_body_bytes: must be between 1024 and");
        assertThatThrownBy(() -> parse("upstream_limits:\n  max_collected_bytes: 1048576\n"
                + "  collected_budget_bytes: 524288\n" + REST))
                .hasMessage("upstream_limits.collected_budget_bytes: must be at least max_collected_bytes (1048576), "
                        + "or no answer that large could pass (test.yaml:3)");
    }
}
