package io.modelgateway.core.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.simulator.SimulatorServer.Options;
import org.junit.jupiter.api.Test;

class SimulatorServerOptionsTest {

    @Test
    void parse_noArguments_loopback9090AndDefaults() {
        Options o = Options.parse(new String[0]);

        assertThat(o.host()).isEqualTo("127.0.0.1");
        assertThat(o.port()).isEqualTo(9090);
        assertThat(o.apiKey()).isNull();
        assertThat(o.settings()).isEqualTo(new SimulatorSettings(0, 0, null, null));
    }

    @Test
    void parse_everyOption_settingsFilled() {
        Options o = Options.parse(new String[] {"--listen", "[::1]:0", "--api-key", "k", "--ttft-ms", "250",
            "--tps", "40.5", "--output-tokens", "64", "--fault", "status=503,retry_after=2"});

        assertThat(o.host()).isEqualTo("::1");
        assertThat(o.port()).isZero();
        assertThat(o.apiKey()).isEqualTo("k");
        assertThat(o.settings()).isEqualTo(new SimulatorSettings(250, 40.5, 64, "status=503,retry_after=2"));
    }

    @Test
    void parse_badInput_illegalArgument() {
        for (String[] args : new String[][] {
            {"--listen", "9090"}, {"--listen", "h:99999"}, {"--tps"}, {"--tps", "x"}, {"--fault", "boom=1"},
            {"--output-tokens", "0"}, {"--verbose", "1"},
        }) {
            assertThatThrownBy(() -> Options.parse(args)).as(String.join(" ", args))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void parse_help_flagged() {
        assertThat(Options.parse(new String[] {"--help"}).help()).isTrue();
    }
}
