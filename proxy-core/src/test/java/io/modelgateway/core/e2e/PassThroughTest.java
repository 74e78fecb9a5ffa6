package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.testing.Eventually;
import io.modelgateway.core.testing.RawUpstream;
import io.modelgateway.core.testing.ScriptedUpstream;
import io.modelgateway.core.testing.ScriptedUpstream.Script;
import io.modelgateway.core.testing.TestGateway;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Same-style pass-through against a scripted upstream on loopback: byte-exact streams, the upstream request
 * the gateway builds, keep-alive reuse, cancellation and upstream failures.
 */
class PassThroughTest {
    private static final String CHAT = "/api/v1/chat/completions";
    private static final String MESSAGES = "/api/v1/messages";
    private static final String STREAM_BODY = "{\"model\":\"up-chat\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

    /** A realistic OpenAI stream, deliberately cut by the upstream at awkward places (inside UTF-8, inside "data:"). */
    private static final String[] OPENAI_PIECES = {
            "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-x-2024\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\nda",
            "ta: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-x-2024\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"caf\u00e9",
            " na\u00efve\"},\"finish_reason\":null}]}\n",
            "\n: keep-alive\n\ndata: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-x-2024\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n"};

    private static String config(ScriptedUpstream up, String extra) {
        return config(up.baseUrl(), extra);
    }

    private static String config(String baseUrl, String extra) {
        return """
                keys:
                  - name: test
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                providers:
                  up-openai:
                    type: openai
                    base_url: %s/v1
                    api_key: sk-provider-openai-secret
                    headers: {x-extra: yes}
                    forward_headers: ["x-sim-*"]
                  up-anthropic:
                    type: anthropic
                    base_url: %s
                    api_key: sk-provider-anthropic-secret
                models:
                  up-chat:
                    deployments: [{provider: up-openai, model: gpt-x}]
                  up-claude:
                    deployments: [{provider: up-anthropic}]
                  no-temp:
                    no_temperature: true
                    deployments: [{provider: up-openai, model: o-model}]
                  no-temp-claude:
                    no_temperature: true
                    deployments: [{provider: up-anthropic}]
                %s
                """.formatted(baseUrl, baseUrl, extra);
    }

    @Test
    void stream_passThrough_reachesClientByteForByte() throws Exception {
        try (ScriptedUpstream up = new ScriptedUpstream(r -> Script.sse(5, OPENAI_PIECES));
                TestGateway gw = TestGateway.start(config(up, ""))) {
            HttpResponse<byte[]> r = gw.http.send(gw.post(CHAT, STREAM_BODY).header("authorization", "Bearer " + TestGateway.KEY)
                    .build(), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("content-type")).hasValue("text/event-stream; charset=utf-8");
            assertThat(r.headers().firstValue("x-request-id")).isPresent();
            assertThat(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo(String.join("", OPENAI_PIECES));
        }
    }

    @Test
    void upstreamRequest_hasProviderKeySplicedModelAndNoClientKey() throws Exception {
        try (ScriptedUpstream up = new ScriptedUpstream(r -> Script.json(200, "{\"id\":\"x\",\"model\":\"gpt-x-2024\"}"));
                TestGateway gw = TestGateway.start(config(up, ""))) {
            HttpResponse<String> r = gw.call(CHAT, "{\"model\":\"up-chat\",\"unknown_field\":{\"a\":1},\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
                    "x-sim-fault", "delay_ms=1", "x-other", "no");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("{\"id\":\"x\",\"model\":\"gpt-x-2024\"}");
            ScriptedUpstream.Received got = up.received.get(0);
            assertThat(got.uri()).isEqualTo("/v1/chat/completions");
            assertThat(got.body()).isEqualTo("{\"model\":\"gpt-x\",\"unknown_field\":{\"a\":1},\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
            assertThat(got.headers()).containsEntry("authorization", "Bearer sk-provider-openai-secret")
                    .containsEntry("x-extra", "yes").containsEntry("x-sim-fault", "delay_ms=1")
                    .doesNotContainKey("x-other").doesNotContainKey("x-api-key");
            assertThat(got.headers().toString()).doesNotContain(TestGateway.KEY);
        }
    }

    @Test
    void noTemperatureModel_chatDropsItSilently_messagesRefusesIt() throws Exception {
        try (ScriptedUpstream up = new ScriptedUpstream(r -> Script.json(200, "{}"));
                TestGateway gw = TestGateway.start(config(up, ""))) {
            HttpResponse<String> r = gw.call(CHAT, "{\"model\":\"no-temp\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"temperature\":0.3}");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(up.received.get(0).body()).isEqualTo("{\"model\":\"o-model\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
            r = gw.call(MESSAGES, "{\"model\":\"no-temp-claude\",\"max_tokens\":5,\"temperature\":0.3,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
            assertThat(r.statusCode()).isEqualTo(400);
            assertThat(r.body()).contains("temperature");
            assertThat(up.received).hasSize(1);
        }
    }

    @Test
    void anthropicUpstream_getsXApiKeyVersionAndBeta() throws Exception {
        try (ScriptedUpstream up = new ScriptedUpstream(r -> Script.json(200, "{\"type\":\"message\"}"));
                TestGateway gw = TestGateway.start(config(up, ""))) {
            HttpResponse<String> r = gw.call(MESSAGES, "{\"model\":\"up-claude\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
                    "anthropic-version", "2026-10-21", "anthropic-beta", "a,b");
            assertThat(r.statusCode()).isEqualTo(200);
            ScriptedUpstream.Received got = up.received.get(0);
            assertThat(got.uri()).isEqualTo("/v1/messages");
            assertThat(got.headers()).containsEntry("x-api-key", "sk-provider-anthropic-secret")
                    .containsEntry("anthropic-version", "2026-10-21").containsEntry("anthropic-beta", "a,b")
                    .doesNotContainKey("authorization");
            assertThat(got.body()).contains("\"model\":\"up-claude\"");
        }
    }

    @Test
    void sequentialRequests_reuseOneUpstreamConnection() throws Exception {
        try (ScriptedUpstream up = new ScriptedUpstream(r -> Script.sse(0, OPENAI_PIECES));
                TestGateway gw = TestGateway.start(config(up, ""))) {
            for (int i = 0; i < 5; i++) {
                assertThat(gw.call(CHAT, STREAM_BODY).statusCode()).isEqualTo(200);
            }
            assertThat(up.connections.get()).isEqualTo(1);
        }
    }

    @Test
    void upstreamCutMidStream_endsWithErrorEventAndNoDone() throws Exception {
        try (ScriptedUpstream up = new ScriptedUpstream(r -> Script.sse(5, OPENAI_PIECES).cutAfter(2));
                TestGateway gw = TestGateway.start(config(up, ""))) {
            HttpResponse<String> r = gw.call(CHAT, STREAM_BODY);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).startsWith(OPENAI_PIECES[0].substring(0, OPENAI_PIECES[0].length() - 2))
                    .contains("data: {\"error\":{\"message\":\"Upstream connection lost\",\"type\":\"server_error\"")
                    .doesNotContain("[DONE]");
        }
    }

    @Test
    void translatedStream_badJsonInsideAnEvent_errorEventThenNothing_anUpstreamError() throws Exception {
        // Framed like JSON (starts with '{', ends with '}'), so only the translator's parse can tell it is not.
        String[] pieces = {OPENAI_PIECES[0].substring(0, OPENAI_PIECES[0].length() - 2),
                "data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"delta\":{\"content\":oops}}]}\n\n",
                OPENAI_PIECES[3].substring(OPENAI_PIECES[3].indexOf("data:")), OPENAI_PIECES[4]};
        io.modelgateway.core.testing.RecordingObserver records = new io.modelgateway.core.testing.RecordingObserver();
        try (ScriptedUpstream up = new ScriptedUpstream(r -> Script.sse(0, pieces));
                TestGateway gw = TestGateway.start(config(up, ""), records)) {
            HttpResponse<String> r = gw.call(MESSAGES, "{\"model\":\"up-chat\",\"stream\":true,\"max_tokens\":5,"
                    + "\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).startsWith("event: message_start")
                    .endsWith("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\","
                            + "\"message\":\"The upstream provider sent a malformed stream event.\"}}\n\n")
                    .doesNotContain("message_stop");
            assertThat(records.of(r).outcome()).isEqualTo(io.modelgateway.core.exchange.Outcome.UPSTREAM_ERROR);
            assertThat(gw.call(CHAT, STREAM_BODY).statusCode()).as("still serving").isEqualTo(200);
        }
    }

    @Test
    void upstreamCutMidStream_anthropicStyle_endsWithErrorEvent() throws Exception {
        String[] pieces = {"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n",
                "event: ping\ndata: {\"type\":\"ping\"}\n\n", "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"};
        try (ScriptedUpstream up = new ScriptedUpstream(r -> Script.sse(5, pieces).cutAfter(2));
                TestGateway gw = TestGateway.start(config(up, ""))) {
            HttpResponse<String> r = gw.call(MESSAGES, "{\"model\":\"up-claude\",\"stream\":true,\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
            assertThat(r.body()).isEqualTo(pieces[0] + pieces[1]
                    + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Upstream connection lost\"}}\n\n");
        }
    }

    @Test
    void clientDisconnectMidStream_closesUpstreamConnection() throws Exception {
        String[] slow = new String[40];
        java.util.Arrays.fill(slow, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n");
        try (ScriptedUpstream up = new ScriptedUpstream(r -> Script.sse(100, slow));
                TestGateway gw = TestGateway.start(config(up, ""))) {
            HttpResponse<InputStream> r = gw.http.send(gw.post(CHAT, STREAM_BODY)
                    .header("authorization", "Bearer " + TestGateway.KEY).build(), HttpResponse.BodyHandlers.ofInputStream());
            InputStream in = r.body();
            byte[] first = new byte[10];
            assertThat(in.read(first)).isPositive();
            in.close(); // the client goes away mid-stream
            Eventually.until(Duration.ofSeconds(3), () -> up.closed.get() == 1);
        }
    }

    @Test
    void slowReadingClient_pausesTheUpstream_andStillGetsEveryByte() throws Exception {
        String event = "data: {\"choices\":[{\"delta\":{\"content\":\"" + "x".repeat(65_000) + "\"}}]}\n\n";
        String[] flood = new String[200]; // about 13 MB, written by the upstream as fast as it can
        java.util.Arrays.fill(flood, event);
        try (ScriptedUpstream up = new ScriptedUpstream(r -> Script.sse(0, flood));
                TestGateway gw = TestGateway.start(config(up, ""));
                java.net.Socket client = new java.net.Socket("127.0.0.1", gw.port())) {
            client.setReceiveBufferSize(16 * 1024);
            String body = STREAM_BODY;
            client.getOutputStream().write(("POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TestGateway.KEY
                    + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body)
                    .getBytes(StandardCharsets.US_ASCII));
            // The client reads nothing: the gateway must stop reading from the upstream, whose writes then back up.
            Eventually.until(Duration.ofSeconds(10), () -> up.sawBackpressure);
            client.setSoTimeout(10_000);
            InputStream in = client.getInputStream();
            long total = 0;
            byte[] buf = new byte[1 << 16];
            String tailSeen = "";
            while (!tailSeen.endsWith("0\r\n\r\n")) {
                int n = in.read(buf);
                if (n < 0) {
                    break;
                }
                total += n;
                tailSeen = (tailSeen + new String(buf, 0, n, StandardCharsets.ISO_8859_1));
                tailSeen = tailSeen.substring(Math.max(0, tailSeen.length() - 16));
            }
            assertThat(total).isGreaterThan(200L * event.length());
        }
    }

    /**
     * Events that reach the gateway in one read leave it in one chunk (one write), byte for byte; a usage chunk the
     * caller did not ask for (GD-21) is still withheld from the middle of them; the next read is the next chunk.
     */
    @Test
    void eventsArrivingTogether_leaveAsOneChunk_withoutTheWithheldUsageChunk() throws Exception {
        String e1 = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":"
                + "{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n";
        String e2 = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":"
                + "{\"content\":\"caf\u00e9\"},\"finish_reason\":null}]}\n\n";
        String usage = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":"
                + "{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n";
        String e3 = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},"
                + "\"finish_reason\":\"stop\"}]}\n\n";
        String done = "data: [DONE]\n\n";
        try (ScriptedUpstream up = new ScriptedUpstream(r -> Script.sse(50, e1 + e2 + usage + e3, done));
                TestGateway gw = TestGateway.start(config(up, ""));
                java.net.Socket client = new java.net.Socket("127.0.0.1", gw.port())) {
            client.setSoTimeout(10_000);
            client.getOutputStream().write(("POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                    + TestGateway.KEY + "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: "
                    + STREAM_BODY.length() + "\r\n\r\n" + STREAM_BODY).getBytes(StandardCharsets.US_ASCII));
            assertThat(chunksOf(client.getInputStream().readAllBytes())).containsExactly(e1 + e2 + e3, done);
        }
    }

    /**
     * An upstream that puts each event in its own HTTP chunk (as OpenAI's API does), all of them arriving in one
     * read: the client gets them in one chunk, byte for byte, and then the end of the body.
     */
    @Test
    void eventsInTheirOwnChunks_arrivingInOneRead_leaveAsOneChunk() throws Exception {
        String[] events = {
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":"
                    + "{\"content\":\"a\"},\"finish_reason\":null}]}\n\n",
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":"
                    + "{\"content\":\"b\"},\"finish_reason\":null}]}\n\n",
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},"
                    + "\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n"};
        StringBuilder answer = new StringBuilder("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                + "transfer-encoding: chunked\r\n\r\n");
        for (String e : events) {
            answer.append(RawUpstream.chunk(e));
        }
        answer.append("0\r\n\r\n");
        AtomicReference<RawUpstream> self = new AtomicReference<>();
        try (RawUpstream up = new RawUpstream((req, ch) -> self.get().send(ch, answer.toString()));
                TestGateway gw = TestGateway.start(config(up.baseUrl(), ""));
                java.net.Socket client = new java.net.Socket("127.0.0.1", gw.port())) {
            self.set(up);
            client.setSoTimeout(10_000);
            client.getOutputStream().write(("POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                    + TestGateway.KEY + "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: "
                    + STREAM_BODY.length() + "\r\n\r\n" + STREAM_BODY).getBytes(StandardCharsets.US_ASCII));
            assertThat(chunksOf(client.getInputStream().readAllBytes())).containsExactly(String.join("", events));
        }
    }

    /** The chunks of a raw chunked HTTP response, decoded as UTF-8, up to its last (empty) one. */
    private static java.util.List<String> chunksOf(byte[] all) {
        String text = new String(all, StandardCharsets.ISO_8859_1);
        assertThat(text).startsWith("HTTP/1.1 200");
        java.util.List<String> chunks = new java.util.ArrayList<>();
        int at = text.indexOf("\r\n\r\n") + 4;
        while (true) {
            int eol = text.indexOf("\r\n", at);
            int size = Integer.parseInt(text.substring(at, eol), 16);
            if (size == 0) {
                return chunks;
            }
            chunks.add(new String(all, eol + 2, size, StandardCharsets.UTF_8));
            at = eol + 2 + size + 2;
        }
    }

    @Test
    void upstreamRefusesProviderCredentials_is502NotA401() throws Exception {
        try (ScriptedUpstream up = new ScriptedUpstream(r -> Script.json(401, "{\"error\":{\"message\":\"bad key sk-provider-openai-secret\"}}"));
                TestGateway gw = TestGateway.start(config(up, ""))) {
            HttpResponse<String> r = gw.call(CHAT, STREAM_BODY);
            assertThat(r.statusCode()).isEqualTo(502);
            assertThat(r.body()).contains("upstream_error").doesNotContain("sk-provider");
        }
    }

    @Test
    void upstream429_isRelayedWithRetryHeaders() throws Exception {
        try (ScriptedUpstream up = new ScriptedUpstream(r -> Script.json(429, "{\"error\":{\"message\":\"slow down\",\"type\":\"requests\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}"));
                TestGateway gw = TestGateway.start(config(up, ""))) {
            HttpResponse<String> r = gw.call(CHAT, STREAM_BODY);
            assertThat(r.statusCode()).isEqualTo(429);
            assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
            assertThat(r.headers().firstValue("retry-after")).isPresent();
            assertThat(r.headers().firstValue("retry-after-ms")).isPresent();
            assertThat(r.body()).contains("slow down");
        }
    }

    @Test
    void upstreamDown_is503ForChatAnd529ForMessages() throws Exception {
        AtomicReference<String> base = new AtomicReference<>();
        try (ScriptedUpstream up = new ScriptedUpstream(r -> Script.json(200, "{}"))) {
            base.set(up.baseUrl());
        }
        String yaml = """
                keys: [{name: t, key: "${GATEWAY_KEY}", models: ["*"]}]
                providers:
                  o: {type: openai, base_url: "%s/v1"}
                  a: {type: anthropic, base_url: "%s"}
                models:
                  c: {deployments: [{provider: o}]}
                  m: {deployments: [{provider: a}]}
                """.formatted(base.get(), base.get());
        try (TestGateway gw = TestGateway.start(yaml)) {
            HttpResponse<String> r = gw.call(CHAT, STREAM_BODY.replace("up-chat", "c"));
            assertThat(r.statusCode()).isEqualTo(503);
            assertThat(r.headers().firstValue("retry-after")).isPresent();
            r = gw.call(MESSAGES, "{\"model\":\"m\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
            assertThat(r.statusCode()).isEqualTo(529);
            assertThat(r.body()).contains("overloaded_error");
        }
    }

    private static Script jsonPieces(String... pieces) {
        java.util.List<byte[]> p = new java.util.ArrayList<>();
        for (String piece : pieces) {
            p.add(piece.getBytes(StandardCharsets.UTF_8));
        }
        return new Script(200, java.util.Map.of("content-type", "application/json"), p, 0, -1);
    }

    private static final String NON_STREAM_BODY = "{\"model\":\"up-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    private static final String ANSWER_HEAD = "{\"id\":\"c1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,"
            + "\"message\":{\"role\":\"assistant\",\"content\":\"";
    private static final String ANSWER_TAIL = "\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,"
            + "\"completion_tokens\":2,\"total_tokens\":5}}";

    @Test
    void answerInSeveralPieces_heldThenRelayedWhole_andTheConnectionIsPooled() throws Exception {
        try (ScriptedUpstream up = new ScriptedUpstream(r -> jsonPieces(ANSWER_HEAD, "hel", "lo", ANSWER_TAIL));
                TestGateway gw = TestGateway.start(config(up, ""))) {
            for (int i = 0; i < 2; i++) {
                HttpResponse<String> r = gw.call(CHAT, NON_STREAM_BODY);
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(r.body()).isEqualTo(ANSWER_HEAD + "hello" + ANSWER_TAIL);
            }
            assertThat(up.connections.get()).isEqualTo(1);
        }
    }

    @Test
    void malformedAnswerInPieces_502UpstreamError() throws Exception {
        try (ScriptedUpstream up = new ScriptedUpstream(r -> jsonPieces(ANSWER_HEAD, "hel", "lo\"}"));
                TestGateway gw = TestGateway.start(config(up, ""))) {
            HttpResponse<String> r = gw.call(CHAT, NON_STREAM_BODY);
            assertThat(r.statusCode()).isEqualTo(502);
            assertThat(r.body()).contains("\"code\":\"upstream_error\"").contains("malformed answer");
        }
    }

    @Test
    void largeAnswer_pastTheHoldLimit_relayedWhole() throws Exception {
        String text = "x".repeat(100_000);
        try (ScriptedUpstream up = new ScriptedUpstream(r -> jsonPieces(ANSWER_HEAD, text.substring(0, 50_000),
                text.substring(50_000), ANSWER_TAIL));
                TestGateway gw = TestGateway.start(config(up, ""))) {
            HttpResponse<String> r = gw.call(CHAT, NON_STREAM_BODY);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).isEqualTo(ANSWER_HEAD + text + ANSWER_TAIL);
        }
    }

    @Test
    void largeMalformedAnswer_pastTheHoldLimit_isCutShortNeverEndedCleanly() throws Exception {
        String text = "x".repeat(100_000);
        try (ScriptedUpstream up = new ScriptedUpstream(r -> r.body().contains("again")
                ? jsonPieces(ANSWER_HEAD, "ok", ANSWER_TAIL)
                : jsonPieces(ANSWER_HEAD, text.substring(0, 50_000), text.substring(50_000), "\"}}]"));
                TestGateway gw = TestGateway.start(config(up, ""))) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> gw.call(CHAT, NON_STREAM_BODY))
                    .isInstanceOf(java.io.IOException.class);
            assertThat(gw.call(CHAT, NON_STREAM_BODY.replace("hi", "again")).statusCode())
                    .as("the gateway keeps serving").isEqualTo(200);
        }
    }
}
