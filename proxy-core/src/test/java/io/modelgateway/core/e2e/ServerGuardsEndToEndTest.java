package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.server.GatewayServer;
import io.modelgateway.core.testing.Eventually;
import io.modelgateway.core.testing.TestGateway;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The API listener's guards over real sockets: 408 for a request trickled in too slowly, idle keep-alive
 * connections closed, the connection and concurrent-request caps, and the graceful drain at shutdown.
 */
class ServerGuardsEndToEndTest {
    static final String STREAM = "{\"model\":\"sim-chat\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}";

    private static TestGateway start(String server) throws Exception {
        return TestGateway.start("server:\n" + server + TestGateway.simulatorConfig());
    }

    @Test
    void slowHeaders_408InTheStyleOfThePath_andClosed() throws Exception {
        try (TestGateway gw = start("  request_timeout_ms: 300\n");
             Socket s = new Socket("127.0.0.1", gw.port())) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write("POST /api/v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: ".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            long start = System.nanoTime();
            String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(250L, 3000L);
            assertThat(answer).startsWith("HTTP/1.1 408").contains("connection: close")
                    .contains("\"type\":\"error\"").contains("\"type\":\"invalid_request_error\"");
        }
    }

    @Test
    void slowHeaders_absoluteFormMessagesTarget_408InAnthropicStyle() throws Exception {
        try (TestGateway gw = start("  request_timeout_ms: 300\n");
             Socket s = new Socket("127.0.0.1", gw.port())) {
            s.setSoTimeout(5000);
            s.getOutputStream().write("POST http://gw.example:8080/api/v1/messages HTTP/1.1\r\nHost: gw.example\r\nx-api"
                    .getBytes(StandardCharsets.US_ASCII));
            String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(answer).startsWith("HTTP/1.1 408").contains("\"type\":\"error\"");
        }
    }

    @Test
    void trickledBody_408_openAiStyle() throws Exception {
        try (TestGateway gw = start("  request_timeout_ms: 300\n");
             Socket s = new Socket("127.0.0.1", gw.port())) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write(("POST /api/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Authorization: Bearer " + TestGateway.KEY + "\r\nContent-Length: 100\r\n\r\n{\"model\":")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            for (int i = 0; i < 3; i++) {
                Thread.sleep(100);
                out.write(' '); // a byte now and then does not reset the clock of the request
                out.flush();
            }
            String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(answer).startsWith("HTTP/1.1 408").contains("\"code\":\"request_timeout\"");
        }
    }

    @Test
    void idleKeepAliveConnection_closedQuietly_butNotWhileARequestIsAnswered() throws Exception {
        try (TestGateway gw = start("  idle_timeout_ms: 300\n");
             Socket s = new Socket("127.0.0.1", gw.port())) {
            s.setSoTimeout(5000);
            // a stream longer than the idle timeout is not cut by it
            String body = STREAM;
            s.getOutputStream().write(("POST /api/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Authorization: Bearer " + TestGateway.KEY + "\r\nx-sim-tps: 40\r\nx-sim-output-tokens: 24\r\n"
                    + "Content-Length: " + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII));
            long start = System.nanoTime();
            String all = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8); // until the idle close
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(all).startsWith("HTTP/1.1 200").contains("data: [DONE]");
            assertThat(ms).as("the stream (~600 ms) ran, then 300 ms idle").isBetween(700L, 4000L);
        }
    }

    @Test
    void connectionCap_oneMoreConnectionGets503() throws Exception {
        try (TestGateway gw = start("  max_connections: 2\n");
             Socket a = new Socket("127.0.0.1", gw.port());
             Socket b = new Socket("127.0.0.1", gw.port())) {
            Thread.sleep(200); // both accepted and counted
            try (Socket c = new Socket("127.0.0.1", gw.port())) {
                c.setSoTimeout(5000);
                String answer = new String(c.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertThat(answer).startsWith("HTTP/1.1 503").contains("retry-after: 1").contains("\"code\":\"overloaded\"");
            }
            assertThat(a.isConnected() && b.isConnected()).isTrue();
        }
    }

    @Test
    void perClientCap_oneMoreFromTheSameAddressGets503_aClosedOneFreesItsPlace() throws Exception {
        try (TestGateway gw = start("  max_connections_per_client: 2\n");
             Socket a = new Socket("127.0.0.1", gw.port());
             Socket b = new Socket("127.0.0.1", gw.port())) {
            Eventually.until(Duration.ofSeconds(5), () -> gw.server().context().connections().size() == 2);
            try (Socket c = new Socket("127.0.0.1", gw.port())) {
                c.setSoTimeout(5000);
                String answer = new String(c.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertThat(answer).startsWith("HTTP/1.1 503").contains("retry-after: 1")
                        .contains("Too many connections from your address");
            }
            a.close();
            Eventually.until(Duration.ofSeconds(5), () -> gw.server().context().connections().size() == 1);
            try (Socket d = new Socket("127.0.0.1", gw.port())) {
                d.setSoTimeout(5000);
                d.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
                assertThat(new String(d.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).startsWith("HTTP/1.1 200");
            }
        }
    }

    @Test
    void maxConnectionsNotSet_capDerivedFromTheDescriptorLimit_andLoggedAtStart() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        Logger log = Logger.getLogger(GatewayServer.class.getName());
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                lines.add(record.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        log.addHandler(capture);
        try (TestGateway gw = TestGateway.start(TestGateway.simulatorConfig())) {
            int cap = gw.server().context().connectionCaps().maxConnections(gw.server().context().config().server());
            assertThat(cap).isPositive();
            assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("connection cap: " + cap
                    + ", derived from the file-descriptor limit "));
        } finally {
            log.removeHandler(capture);
        }
    }

    @Test
    void concurrentRequestCap_503OnChat_529OnMessages_whileAStreamRuns() throws Exception {
        try (TestGateway gw = start("  max_concurrent_requests: 1\n")) {
            HttpRequest slow = gw.post("/api/v1/chat/completions", STREAM)
                    .header("authorization", "Bearer " + TestGateway.KEY)
                    .header("x-sim-tps", "40").header("x-sim-output-tokens", "40").build();
            HttpResponse<InputStream> stream = gw.http.send(slow, HttpResponse.BodyHandlers.ofInputStream());
            HttpResponse<String> chat = gw.call("/api/v1/chat/completions", STREAM);
            assertThat(chat.statusCode()).isEqualTo(503);
            assertThat(chat.headers().firstValue("retry-after")).isPresent();
            HttpResponse<String> messages = gw.call("/api/v1/messages",
                    "{\"model\":\"sim-chat\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
            assertThat(messages.statusCode()).isEqualTo(529);
            assertThat(messages.body()).contains("overloaded_error");
            try (InputStream in = stream.body()) {
                assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).endsWith("data: [DONE]\n\n");
            }
            Thread.sleep(100); // the stream's exchange ends just after its last byte
            assertThat(gw.call("/api/v1/chat/completions", STREAM).statusCode()).isEqualTo(200);
        }
    }

    @Test
    void shutdown_readyFalseAtOnce_streamInProgressFinishesWithinTheDrain() throws Exception {
        TestGateway gw = TestGateway.start("admin:\n  listen: 127.0.0.1:0\n" + TestGateway.simulatorConfig());
        HttpRequest slow = gw.post("/api/v1/chat/completions", STREAM)
                .header("authorization", "Bearer " + TestGateway.KEY)
                .header("x-sim-tps", "40").header("x-sim-output-tokens", "30").build();
        CompletableFuture<HttpResponse<String>> stream = gw.http.sendAsync(slow, HttpResponse.BodyHandlers.ofString());
        Thread.sleep(150);
        int admin = gw.server().adminPort();
        CompletableFuture<Void> closing = CompletableFuture.runAsync(() -> gw.server().close(10_000));
        Thread.sleep(100);
        HttpResponse<String> ready = gw.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin + "/ready"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(ready.statusCode()).isEqualTo(503);
        HttpResponse<String> s = stream.get(10, TimeUnit.SECONDS);
        assertThat(s.statusCode()).isEqualTo(200);
        assertThat(s.body()).endsWith("data: [DONE]\n\n");
        closing.get(10, TimeUnit.SECONDS);
    }

    @Test
    void shutdown_drainDeadline_endsAnOpenStreamWithTheErrorEvent() throws Exception {
        TestGateway gw = TestGateway.start(TestGateway.simulatorConfig());
        HttpRequest slow = gw.post("/api/v1/chat/completions", STREAM)
                .header("authorization", "Bearer " + TestGateway.KEY)
                .header("x-sim-tps", "10").header("x-sim-output-tokens", "100").build();
        CompletableFuture<HttpResponse<String>> stream = gw.http.sendAsync(slow, HttpResponse.BodyHandlers.ofString());
        Thread.sleep(300);
        long start = System.nanoTime();
        gw.server().close(300);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(5000);
        HttpResponse<String> s = stream.get(10, TimeUnit.SECONDS);
        assertThat(s.statusCode()).isEqualTo(200);
        assertThat(s.body()).doesNotContain("[DONE]")
                .contains("data: {\"error\":{\"message\":\"The gateway is shutting down; retry the request.\"");
    }
}
