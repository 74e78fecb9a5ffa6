package io.modelgateway.core.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The standalone simulator as its launcher runs it: a separate JVM that stays up until SIGTERM, then exits 0. */
class SimulatorProcessTest {

    @Test
    void standaloneProcess_servesUntilSigterm_thenExitsCleanly() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                "io.modelgateway.core.cli.Main", "simulator", "--listen", "127.0.0.1:0")
                .redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            // The test class path holds slf4j-api (from the cloud SDKs in test scope), whose missing binding Netty's
            // logger lookup reports on stderr first; the shipped jar has none. The listening line comes after it.
            String line = out.readLine();
            for (int i = 0; i < 5 && line != null && line.startsWith("SLF4J:"); i++) {
                line = out.readLine();
            }
            assertThat(line).startsWith("simulator listening on http://127.0.0.1:");
            String base = line.substring("simulator listening on ".length());
            Thread.sleep(500); // a process that would exit once main returns is gone by now
            assertThat(p.isAlive()).isTrue();
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                            URI.create(base + "/v1/chat/completions")).timeout(Duration.ofSeconds(10))
                    .header("content-type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(
                            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).contains("\"object\":\"chat.completion\"");
            p.destroy(); // SIGTERM
            assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).isIn(0, 143);
        } finally {
            p.destroyForcibly();
        }
    }
}
