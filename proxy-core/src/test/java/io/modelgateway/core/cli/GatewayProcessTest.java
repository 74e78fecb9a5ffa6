package io.modelgateway.core.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The gateway as its launchers run it, a JVM of its own: SIGTERM, how systemd stops it, ends it with status 0
 * (the JVM's own answer to SIGTERM is 143, which systemd counts as a failure).
 */
class GatewayProcessTest {

    @Test
    void gatewayProcess_sigterm_exitsWithStatus0() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                "io.modelgateway.core.cli.Main", "gateway", "--config", "../conf/gateway.yaml",
                "--listen", "127.0.0.1:0")
                .redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            StringBuilder seen = new StringBuilder();
            String line;
            while ((line = out.readLine()) != null && !line.startsWith("gateway listening on http://127.0.0.1:")) {
                seen.append(line).append('\n');
            }
            assertThat(line).as("the gateway's output:\n%s", seen).isNotNull();

            p.destroy(); // SIGTERM
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).isZero();
        } finally {
            p.destroyForcibly();
        }
    }
}
