package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.TestGateway;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** HTTP/1.1 connection behaviour over raw sockets: keep-alive, pipelining, Connection: close. */
class ConnectionHandlingTest {
    private static TestGateway gw;
    private static final RecordingObserver records = new RecordingObserver();

    @BeforeAll
    static void start() throws Exception {
        gw = TestGateway.start(TestGateway.simulatorConfig(), records);
    }

    @AfterAll
    static void stop() {
        gw.close();
    }

    private static String request(String body, String extraHeaders) {
        return "POST /api/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Authorization: Bearer " + TestGateway.KEY + "\r\n" + extraHeaders
                + "Content-Length: " + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body;
    }

    @Test
    void pipelinedRequests_getResponsesInOrderOnOneConnection() throws Exception {
        String stream = "{\"model\":\"sim-chat\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}";
        String plain = "{\"model\":\"sim-chat\",\"max_tokens\":2,\"messages\":[{\"role\":\"user\",\"content\":\"b\"}]}";
        try (Socket s = new Socket("127.0.0.1", gw.port())) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write((request(stream, "") + request(plain, "Connection: close\r\n")).getBytes(StandardCharsets.UTF_8));
            out.flush();
            String all = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8); // EOF: closed after #2
            int first = all.indexOf("HTTP/1.1 200");
            int second = all.indexOf("HTTP/1.1 200", first + 1);
            assertThat(first).isZero();
            assertThat(second).isPositive();
            assertThat(all.substring(0, second)).contains("text/event-stream").contains("data: [DONE]");
            assertThat(all.substring(second)).contains("\"object\":\"chat.completion\"");
        }
    }

    @Test
    void pipelinedRequestsAnsweredBeforeTheExchange_waitForTheStreamAhead() throws Exception {
        String stream = "{\"model\":\"sim-chat\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}";
        String badKey = "POST /api/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Authorization: Bearer sk-wrong\r\nContent-Length: 2\r\n\r\n{}";
        String health = "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        try (Socket s = new Socket("127.0.0.1", gw.port())) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            // a paced stream, then two requests the router and the authenticator answer themselves
            out.write((request(stream, "x-sim-tps: 200\r\nx-sim-output-tokens: 20\r\n") + badKey + health)
                    .getBytes(StandardCharsets.UTF_8));
            out.flush();
            String all = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int done = all.indexOf("data: [DONE]");
            int unauthorized = all.indexOf("HTTP/1.1 401");
            int ok = all.indexOf("HTTP/1.1 200", unauthorized);
            assertThat(all).startsWith("HTTP/1.1 200");
            assertThat(done).isPositive();
            assertThat(unauthorized).as("the 401 comes after the whole stream").isGreaterThan(done);
            assertThat(ok).as("then the health answer").isGreaterThan(unauthorized);
            assertThat(all.substring(ok)).contains("{\"status\":\"ok\"}");
        }
    }

    @Test
    void connectionClose_onStream_closesAfterTheLastChunk() throws Exception {
        String stream = "{\"model\":\"sim-chat\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}";
        try (Socket s = new Socket("127.0.0.1", gw.port())) {
            s.setSoTimeout(5000);
            s.getOutputStream().write(request(stream, "Connection: close\r\n").getBytes(StandardCharsets.UTF_8));
            InputStream in = s.getInputStream();
            String all = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(all).startsWith("HTTP/1.1 200").contains("data: [DONE]").endsWith("0\r\n\r\n");
        }
    }

    @Test
    void keepAlive_manySequentialRequestsOnOneConnection() throws Exception {
        String plain = "{\"model\":\"sim-chat\",\"max_tokens\":2,\"messages\":[{\"role\":\"user\",\"content\":\"b\"}]}";
        try (Socket s = new Socket("127.0.0.1", gw.port())) {
            s.setSoTimeout(5000);
            for (int i = 0; i < 20; i++) {
                s.getOutputStream().write(request(plain, "").getBytes(StandardCharsets.UTF_8));
                String head = readHead(s.getInputStream());
                assertThat(head).startsWith("HTTP/1.1 200");
                int len = Integer.parseInt(head.replaceAll("(?s).*content-length: (\\d+).*", "$1"));
                assertThat(s.getInputStream().readNBytes(len)).hasSize(len);
            }
        }
    }

    private static String readHead(InputStream in) throws Exception {
        StringBuilder sb = new StringBuilder();
        while (!sb.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                break;
            }
            sb.append((char) c);
        }
        return sb.toString();
    }

    @Test
    void connectionClose_servedByTheSimulator_isRecordedAsDoneWithTheSimulatorsUsage() throws Exception {
        // The in-process simulator's writer used to close the connection itself before the exchange ended, so the
        // close cancelled it: recorded as cancelled, with estimated usage, though the caller got the whole answer.
        String plain = "{\"model\":\"sim-chat\",\"max_tokens\":2,\"messages\":[{\"role\":\"user\",\"content\":\"b\"}]}";
        for (String body : new String[] {plain, plain.replace("{\"model\"", "{\"stream\":true,\"model\"")}) {
            records.clear();
            try (Socket s = new Socket("127.0.0.1", gw.port())) {
                s.setSoTimeout(5000);
                s.getOutputStream().write(request(body, "Connection: close\r\n").getBytes(StandardCharsets.UTF_8));
                String all = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8); // EOF: closed
                assertThat(all).startsWith("HTTP/1.1 200");
            }
            ExchangeRecord rec = records.next();
            assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
            assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.UPSTREAM);
            assertThat(rec.outputTokens()).isPositive();
        }
    }
}
