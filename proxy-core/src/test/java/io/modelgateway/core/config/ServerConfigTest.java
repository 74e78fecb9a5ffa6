package io.modelgateway.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ServerConfigTest {
    static final String REST = """
            keys: [{name: k, key: "${K}", models: ["*"]}]
            providers: {sim: {type: simulator}}
            models: {m: {deployments: [{provider: sim}]}}
            """;

    private static GatewayConfig parse(String yaml) throws ConfigException {
        return ConfigLoader.parse(yaml, "test.yaml", Map.of("K", "sk-k"), null);
    }

    @Test
    void server_absent_defaults() throws Exception {
        assertThat(parse(REST).server()).isEqualTo(ServerConfig.DEFAULT);
        assertThat(ServerConfig.DEFAULT.drainTimeoutMs()).isEqualTo(30_000);
        assertThat(ServerConfig.DEFAULT.requestTimeoutMs()).isEqualTo(30_000);
    }

    @Test
    void server_allFields_read() throws Exception {
        ServerConfig s = parse("server: {max_connections: 10, max_concurrent_requests: 5, request_timeout_ms: 1000,"
                + " idle_timeout_ms: 2000, drain_timeout_ms: 0}\n" + REST).server();
        assertThat(s).isEqualTo(new ServerConfig(10, 5, 1000, 2000, 0));
    }

    @Test
    void defaults_connectionCapDerived_idle75s_noPerClientCap() throws Exception {
        ServerConfig s = parse(REST).server();
        assertThat(s.maxConnections()).isEqualTo(ServerConfig.DERIVED);
        assertThat(s.idleTimeoutMs()).isEqualTo(75_000);
        assertThat(s.maxConnectionsPerClient()).isZero();
        // written out, 0 still means no cap (not "derive one")
        assertThat(parse("server: {max_connections: 0}\n" + REST).server().maxConnections()).isZero();
    }

    @Test
    void maxConnectionsPerClient_readAndRangeChecked() throws Exception {
        assertThat(parse("server: {max_connections_per_client: 64}\n" + REST).server().maxConnectionsPerClient())
                .isEqualTo(64);
        assertThatThrownBy(() -> parse("server: {max_connections_per_client: -1}\n" + REST))
                .hasMessageStartingWith("server.max_connections_per_client: must be between 0 and 1000000");
    }

    @Test
    void server_badFieldOrValue_namesTheField() {
        assertThatThrownBy(() -> parse("server: {max_conections: 10}\n" + REST))
                .hasMessageStartingWith("server.max_conections: unknown field (did you mean max_connections?)");
        assertThatThrownBy(() -> parse("server: {request_timeout_ms: 5}\n" + REST))
                .hasMessageContaining("server.request_timeout_ms").hasMessageEndingWith("(test.yaml:1)");
    }
}
