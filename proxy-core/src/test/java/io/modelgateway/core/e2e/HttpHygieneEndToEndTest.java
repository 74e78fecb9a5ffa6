package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.testing.TestGateway;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The request line and the Host header over raw sockets, as a hostile or sloppy client writes them: a missing or
 * doubled Host, HTTP versions the gateway does not speak, absolute-form targets, and 405s that say what is allowed.
 */
class HttpHygieneEndToEndTest {
    private static final String CHAT_BODY = "{\"model\":\"sim-chat\",\"max_tokens\":2,\"messages\":[{\"role\":\"user\","
            + "\"content\":\"hi\"}]}";
    private static TestGateway gw;

    @BeforeAll
    static void start() throws Exception {
        gw = TestGateway.start(TestGateway.simulatorConfig());
    }

    @AfterAll
    static void stop() {
        gw.close();
    }

    @Test
    void missingHost_onHttp11_is400AndCloses_onHttp10_stillServed() throws Exception {
        String answer = exchange("POST /api/v1/chat/completions HTTP/1.1\r\n" + chatHeaders() + CHAT_BODY);
        assertThat(answer).startsWith("HTTP/1.1 400 ").contains("connection: close")
                .contains("\"type\":\"invalid_request_error\"").contains("Host header is required");
        // HTTP/1.0 has no Host requirement and stays supported
        assertThat(exchange("GET /health HTTP/1.0\r\n\r\n")).startsWith("HTTP/1.1 200 ").endsWith("{\"status\":\"ok\"}");
    }

    @Test
    void doubledHost_is400_evenWithTheSameValue() throws Exception {
        String answer = exchange("POST /api/v1/chat/completions HTTP/1.1\r\nHost: a\r\nHost: a\r\n" + chatHeaders()
                + CHAT_BODY);
        assertThat(answer).startsWith("HTTP/1.1 400 ").contains("More than one Host header");
    }

    @Test
    void malformedHost_is400() throws Exception {
        String answer = exchange("GET /health HTTP/1.1\r\nHost: evil.example/path@x\r\n\r\n");
        assertThat(answer).startsWith("HTTP/1.1 400 ").contains("not a valid host");
    }

    @Test
    void http12AndHttp3AndHttp2_are505InThePathsStyle() throws Exception {
        for (String version : new String[] {"HTTP/1.2", "HTTP/3.0", "HTTP/2.0"}) {
            String answer = exchange("POST /api/v1/chat/completions " + version + "\r\nHost: x\r\n" + chatHeaders()
                    + CHAT_BODY);
            assertThat(answer).as(version).startsWith("HTTP/1.1 505 ").contains("connection: close")
                    .contains("\"code\":\"http_version_not_supported\"");
        }
        String messages = exchange("POST /api/v1/messages HTTP/1.2\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
        assertThat(messages).startsWith("HTTP/1.1 505 ").contains("{\"type\":\"error\",\"error\":{\"type\":");
    }

    @Test
    void refusedRequest_pipelinedOnesAfterItAreNotServed() throws Exception {
        String answer = exchange("POST /api/v1/chat/completions HTTP/1.1\r\n" + chatHeaders() + CHAT_BODY
                + "POST /api/v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + chatHeaders() + CHAT_BODY);
        assertThat(answer).startsWith("HTTP/1.1 400 ");
        assertThat(answer.split("HTTP/1\\.1 \\d{3} ", -1)).as("one answer only, then the close").hasSize(2);
        assertThat(answer).doesNotContain("chat.completion");
    }

    @Test
    void absoluteFormTarget_isRoutedByItsPath() throws Exception {
        String answer = exchange("POST http://127.0.0.1:" + gw.port() + "/api/v1/chat/completions?x=1 HTTP/1.1\r\n"
                + "Host: 127.0.0.1\r\nConnection: close\r\n" + chatHeaders() + CHAT_BODY);
        assertThat(answer).startsWith("HTTP/1.1 200 ").contains("\"object\":\"chat.completion\"");

        // the error style follows the path inside the absolute form too
        String messages = exchange("POST HTTP://gateway.internal/api/v1/messages HTTP/1.1\r\nHost: gateway.internal\r\n"
                + "Connection: close\r\nx-api-key: " + TestGateway.KEY + "\r\nContent-Length: 2\r\n\r\n{}");
        assertThat(messages).startsWith("HTTP/1.1 400 ").contains("\"type\":\"error\"")
                .contains("anthropic-version: header is required");
    }

    @Test
    void methodNotAllowed_carriesAllow() throws Exception {
        assertThat(exchange("GET /api/v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
                .startsWith("HTTP/1.1 405 ").contains("allow: POST\r\n");
        assertThat(exchange("POST /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))
                .startsWith("HTTP/1.1 405 ").contains("allow: GET, HEAD\r\n");
        assertThat(exchange("DELETE /api/v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
                .startsWith("HTTP/1.1 405 ").contains("allow: GET\r\n");
        assertThat(exchange("PUT /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))
                .startsWith("HTTP/1.1 405 ").contains("allow: GET\r\n");
        assertThat(exchange("GET /api/v1/messages HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
                .startsWith("HTTP/1.1 405 ").contains("allow: POST\r\n").contains("\"type\":\"error\"");
    }

    private static String chatHeaders() {
        return "Content-Type: application/json\r\nAuthorization: Bearer " + TestGateway.KEY + "\r\nContent-Length: "
                + CHAT_BODY.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n";
    }

    /** Writes the bytes and reads until the gateway closes the connection (every request here ends in a close). */
    private static String exchange(String request) throws Exception {
        try (Socket s = new Socket("127.0.0.1", gw.port())) {
            s.setSoTimeout(5000);
            s.getOutputStream().write(request.getBytes(StandardCharsets.UTF_8));
            s.getOutputStream().flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            try {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    all.write(buf, 0, n);
                }
            } catch (SocketTimeoutException e) {
                throw new AssertionError("the gateway did not close the connection; read so far: " + all, e);
            }
            return all.toString(StandardCharsets.UTF_8);
        }
    }
}
