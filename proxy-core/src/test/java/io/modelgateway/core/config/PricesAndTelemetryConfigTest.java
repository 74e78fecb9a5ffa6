package io.modelgateway.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.Map;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;

/** Deployment prices (a mapping, or an entry of the shipped price file), keys' budgets and cost header, telemetry. */
class PricesAndTelemetryConfigTest {
    private static final Map<String, String> ENV = Map.of("GATEWAY_KEY", "sk-a-gateway-key", "PRICE", "3");

    private static String config(String deployment, String keyExtra, String top) {
        return top + """
                keys:
                  - name: team
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                %s
                providers:
                  sim: {type: simulator}
                models:
                  m:
                    deployments:
                      - provider: sim
                        model: m-1
                %s
                """.formatted(keyExtra, deployment);
    }

    private static GatewayConfig parse(String yaml) throws ConfigException {
        return ConfigLoader.parse(yaml, "test.yaml", ENV, null);
    }

    private static AbstractThrowableAssert<?, ? extends Throwable> assertError(String yaml) {
        return assertThatThrownBy(() -> parse(yaml)).isInstanceOf(ConfigException.class);
    }

    private static PriceConfig price(GatewayConfig c) {
        return c.models().get("m").deployments().get(0).price();
    }

    @Test
    void noBlocks_noPriceNoBudgetNoTelemetry() throws Exception {
        GatewayConfig c = parse(config("", "", ""));
        assertThat(price(c)).isNull();
        assertThat(c.models().get("m").priced()).isFalse();
        assertThat(c.keys().get(0).budget()).isEqualTo(BudgetConfig.NONE);
        assertThat(c.keys().get(0).costHeader()).isFalse();
        assertThat(c.telemetry()).isNull();
    }

    @Test
    void priceMapping_cachePricesDefaultToInput() throws Exception {
        PriceConfig p = price(parse(config("        price: {input: 2.5, output: 10}", "", "")));
        assertThat(p).isEqualTo(new PriceConfig(2.5, 2.5, 2.5, 10, 0, null));
        PriceConfig full = price(parse(config(
                "        price: {input: 3, cached_input: 0.3, cache_write: 3.75, output: 15, per_request: 0.01}", "", "")));
        // 1M input of which 200k cache reads and 100k cache writes, 10k output, plus the request
        assertThat(full.cost(1_000_000, 200_000, 100_000, 10_000))
                .isCloseTo(0.7 * 3 + 0.2 * 0.3 + 0.1 * 3.75 + 0.01 * 15 + 0.01, within(1e-12));
    }

    @Test
    void priceByName_fromTheShippedFile() throws Exception {
        PriceConfig p = price(parse(config("        price: claude-sonnet-4-5", "", "")));
        assertThat(p.name()).isEqualTo("claude-sonnet-4-5");
        assertThat(p.input()).isEqualTo(3);
        assertThat(p.output()).isEqualTo(15);
        assertThat(PriceFile.shipped().asOf()).matches("\\d{4}-\\d{2}-\\d{2}");
        assertError(config("        price: gpt-imaginary", "", ""))
                .hasMessageContaining("models.m.deployments[0].price")
                .hasMessageContaining("'gpt-imaginary' is not in the shipped price file");
    }

    @Test
    void badPrices_nameTheFieldAndLine() {
        assertError(config("        price: {input: \"${PRICE}\", output: 1}", "", ""))
                .hasMessageContaining("price.input").hasMessageContaining("no ${...} references");
        assertError(config("        price: {input: -1, output: 1}", "", "")).hasMessageContaining("price.input")
                .hasMessageContaining("between 0 and");
        assertError(config("        price: {input: 1}", "", "")).hasMessageContaining("output");
        assertError(config("        price: {input: 1, output: 1, outptu: 2}", "", ""))
                .hasMessageContaining("outptu");
        assertError(config("        price: 3", "", "")).hasMessageContaining("must be a mapping of prices");
    }

    @Test
    void budgetAndCostHeader() throws Exception {
        GatewayConfig c = parse(config("        price: {input: 1, output: 2}",
                "    budget_usd: {daily: 5, monthly: 100.5}\n    cost_header: true", ""));
        assertThat(c.keys().get(0).budget()).isEqualTo(new BudgetConfig(5, 100.5));
        assertThat(c.keys().get(0).costHeader()).isTrue();
        assertError(config("", "    budget_usd: {daily: 0}", "")).hasMessageContaining("keys[0].budget_usd.daily");
        assertError(config("", "    budget_usd: {}", "")).hasMessageContaining("needs daily, monthly or both");
        assertError(config("", "    budget_usd: {daily: \"${PRICE}\"}", ""))
                .hasMessageContaining("budgets take no ${...} references");
        assertError(config("", "    budget_usd: {weekly: 3}", "")).hasMessageContaining("weekly");
    }

    @Test
    void telemetry_defaultsAndChecks() throws Exception {
        TelemetryConfig t = parse(config("", "", "telemetry:\n  otlp_endpoint: http://127.0.0.1:4318/v1/traces\n"))
                .telemetry();
        assertThat(t.otlpEndpoint()).isEqualTo("http://127.0.0.1:4318/v1/traces");
        assertThat(t.samplingRatio()).isEqualTo(1.0);
        assertThat(t.serviceName()).isEqualTo(TelemetryConfig.DEFAULT_SERVICE_NAME);
        assertThat(parse(config("", "", "telemetry:\n  otlp_endpoint: https://otel.example/v1/traces\n"
                + "  sampling_ratio: 0.25\n  service_name: edge-gw\n")).telemetry())
                .isEqualTo(new TelemetryConfig("https://otel.example/v1/traces", 0.25, "edge-gw"));
        assertError(config("", "", "telemetry:\n  otlp_endpoint: grpc://127.0.0.1:4317\n"))
                .hasMessageContaining("telemetry.otlp_endpoint").hasMessageContaining("http://");
        assertError(config("", "", "telemetry:\n  sampling_ratio: 0.5\n")).hasMessageContaining("otlp_endpoint");
        assertError(config("", "", "telemetry:\n  otlp_endpoint: http://h/v1/traces\n  sampling_ratio: 1.5\n"))
                .hasMessageContaining("telemetry.sampling_ratio");
    }
}
