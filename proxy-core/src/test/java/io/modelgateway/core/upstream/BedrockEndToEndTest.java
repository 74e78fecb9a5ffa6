package io.modelgateway.core.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.simulator.SimulatorServer;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.testing.FakeBedrock;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.TestGateway;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Claude on Amazon Bedrock end to end: a gateway with a {@code type: bedrock} provider in front of {@link FakeBedrock},
 * whose SigV4 check is the AWS SDK's signer and whose streams are encoded by AWS's event-stream codec, itself in front
 * of the standalone simulator (Anthropic style) or answering scripts. Both caller styles, streaming and not, the
 * errors and the broken streams.
 */
class BedrockEndToEndTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String KEY_ID = "AKIDBEDROCKTEST00001";
    private static final String SECRET = "bedrock/Test+Secret/Key0123456789abcdefGHIJ";
    private static final String TOKEN = "FwoGZXIvYXdzEBedrockSessionToken0123456789/abc+def==";
    private static final String MODEL_ID = "anthropic.claude-sonnet-4-5-20250929-v1:0";
    private static final String PATH_ID = "anthropic.claude-sonnet-4-5-20250929-v1%3A0";
    private static final String LLAMA_ID = "meta.llama3-3-70b-instruct-v1:0";
    private static final String LLAMA_PATH = "/model/meta.llama3-3-70b-instruct-v1%3A0/converse";
    private static final String MESSAGES = "/api/v1/messages";
    private static final String CHAT = "/api/v1/chat/completions";
    private static final String HELLO_MESSAGES =
            "{\"model\":\"claude-aws\",\"max_tokens\":16,\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]%s}";
    private static final String HELLO_CHAT =
            "{\"model\":\"claude-aws\",\"max_tokens\":16,\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]%s}";

    private static SimulatorServer simulator;
    private FakeBedrock bedrock;
    private TestGateway gateway;
    private final RecordingObserver records = new RecordingObserver();

    @BeforeAll
    static void startSimulator() throws Exception {
        simulator = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, "sk-sim", null);
    }

    private static String simUrl() {
        return "http://127.0.0.1:" + simulator.port();
    }

    @AfterAll
    static void stopSimulator() {
        simulator.close();
    }

    @AfterEach
    void stop() {
        if (gateway != null) {
            gateway.close();
        }
        if (bedrock != null) {
            bedrock.close();
        }
    }

    private void start(FakeBedrock fake, String credentials, Map<String, String> env) throws Exception {
        bedrock = fake;
        gateway = TestGateway.startWithEnv("""
                keys:
                  - name: test
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                providers:
                  aws:
                    type: bedrock
                    region: us-east-1
                    base_url: %s
                %s
                models:
                  claude-aws:
                    deployments: [{provider: aws, model: "%s"}]
                  llama-aws:
                    deployments: [{provider: aws, model: "%s"}]
                """.formatted(fake.baseUrl(), credentials, MODEL_ID, LLAMA_ID), env, records);
    }

    private void startSigned(Function<FakeBedrock.Received, FakeBedrock.Script> scripts) throws Exception {
        start(FakeBedrock.signed("us-east-1", KEY_ID, SECRET, null, simUrl(), "sk-sim").cannedConverse()
                        .script(scripts),
                """
                    aws_access_key_id: ${AWS_ACCESS_KEY_ID}
                    aws_secret_access_key: ${AWS_SECRET_ACCESS_KEY}
                """, Map.of("AWS_ACCESS_KEY_ID", KEY_ID, "AWS_SECRET_ACCESS_KEY", SECRET));
    }

    // ------------------------------------------------------------------ the happy paths

    @Test
    void messagesCaller_notStreaming_signedInvokeModelWithTheMessagesBody_answerPassedThrough() throws Exception {
        startSigned(r -> null);

        HttpResponse<String> r = gateway.call(MESSAGES, HELLO_MESSAGES.formatted(""),
                "anthropic-beta", "prompt-caching-2024-07-31, token-efficient-tools-2025-02-19");

        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode answer = JSON.readTree(r.body());
        assertThat(answer.path("type").asText()).isEqualTo("message");
        assertThat(answer.path("content").path(0).path("text").asText()).isNotEmpty();
        assertThat(answer.path("usage").path("output_tokens").asInt()).isPositive();
        assertThat(bedrock.refused).isEmpty();
        FakeBedrock.Received sent = bedrock.received.get(0);
        assertThat(sent.path()).isEqualTo("/model/" + PATH_ID + "/invoke");
        assertThat(sent.headers().get("authorization"))
                .startsWith("AWS4-HMAC-SHA256 Credential=" + KEY_ID + "/").contains("/us-east-1/bedrock/aws4_request");
        assertThat(sent.headers()).doesNotContainKeys("anthropic-version", "anthropic-beta", "x-api-key");
        JsonNode body = sent.json();
        assertThat(body.path("anthropic_version").asText()).isEqualTo("bedrock-2023-05-31");
        assertThat(body.has("model")).isFalse();
        assertThat(JSON.convertValue(body.path("anthropic_beta"), List.class))
                .containsExactly("prompt-caching-2024-07-31", "token-efficient-tools-2025-02-19");
        assertThat(r.body()).doesNotContain(SECRET).doesNotContain(KEY_ID);
    }

    @Test
    void messagesCaller_streaming_eventStreamBecomesAnthropicSse() throws Exception {
        startSigned(r -> null);

        HttpResponse<String> r = gateway.call(MESSAGES, HELLO_MESSAGES.formatted(",\"stream\":true"));

        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type").orElse("")).startsWith("text/event-stream");
        List<String> types = eventTypes(r.body());
        assertThat(types.get(0)).isEqualTo("message_start");
        assertThat(types).contains("content_block_delta", "message_delta").last().isEqualTo("message_stop");
        assertThat(bedrock.received.get(0).path()).isEqualTo("/model/" + PATH_ID + "/invoke-with-response-stream");
        assertThat(bedrock.received.get(0).json().has("stream")).isFalse();
        assertThat(bedrock.refused).isEmpty();
    }

    @Test
    void chatCaller_notStreamingAndStreaming_translatedFromBedrockClaude() throws Exception {
        startSigned(r -> null);

        HttpResponse<String> whole = gateway.call(CHAT, HELLO_CHAT.formatted(""));
        HttpResponse<String> stream = gateway.call(CHAT,
                HELLO_CHAT.formatted(",\"stream\":true,\"stream_options\":{\"include_usage\":true}"));

        assertThat(whole.statusCode()).as(whole.body()).isEqualTo(200);
        JsonNode c = JSON.readTree(whole.body());
        assertThat(c.path("object").asText()).isEqualTo("chat.completion");
        assertThat(c.path("choices").path(0).path("message").path("content").asText()).isNotEmpty();
        assertThat(c.path("usage").path("completion_tokens").asInt()).isPositive();
        assertThat(stream.statusCode()).as(stream.body()).isEqualTo(200);
        assertThat(stream.body()).contains("\"object\":\"chat.completion.chunk\"").contains("\"usage\":{")
                .endsWith("data: [DONE]\n\n");
        assertThat(bedrock.received).extracting(FakeBedrock.Received::path).containsExactly(
                "/model/" + PATH_ID + "/invoke", "/model/" + PATH_ID + "/invoke-with-response-stream");
        assertThat(bedrock.refused).isEmpty();
    }

    /** Contract 12.2: a Responses caller on Claude on Bedrock, through the messages translation and InvokeModel. */
    @Test
    void responsesCaller_notStreamingAndStreaming_translatedFromBedrockClaude() throws Exception {
        startSigned(r -> null);

        String hello = "{\"model\":\"claude-aws\",\"input\":\"Hello\",\"max_output_tokens\":64%s}";
        HttpResponse<String> whole = gateway.call("/api/v1/responses", hello.formatted(""));
        HttpResponse<String> stream = gateway.call("/api/v1/responses", hello.formatted(",\"stream\":true"));

        assertThat(whole.statusCode()).as(whole.body()).isEqualTo(200);
        JsonNode r = JSON.readTree(whole.body());
        assertThat(r.path("object").asText()).isEqualTo("response");
        assertThat(r.path("output_text").asText()).isNotEmpty();
        assertThat(r.path("usage").path("output_tokens").asInt()).isPositive();
        assertThat(stream.statusCode()).as(stream.body()).isEqualTo(200);
        assertThat(stream.body()).startsWith("event: response.created").contains("event: response.output_text.delta")
                .contains("event: response.completed");
        assertThat(bedrock.received).extracting(FakeBedrock.Received::path).containsExactly(
                "/model/" + PATH_ID + "/invoke", "/model/" + PATH_ID + "/invoke-with-response-stream");
        assertThat(bedrock.refused).isEmpty();
    }

    @Test
    void temporaryCredentials_sessionTokenSentAndSigned() throws Exception {
        start(FakeBedrock.signed("us-east-1", KEY_ID, SECRET, TOKEN, simUrl(), "sk-sim"), """
                    aws_access_key_id: ${AWS_ACCESS_KEY_ID}
                    aws_secret_access_key: ${AWS_SECRET_ACCESS_KEY}
                    aws_session_token: ${AWS_SESSION_TOKEN}
                """, Map.of("AWS_ACCESS_KEY_ID", KEY_ID, "AWS_SECRET_ACCESS_KEY", SECRET, "AWS_SESSION_TOKEN", TOKEN));

        HttpResponse<String> r = gateway.call(MESSAGES, HELLO_MESSAGES.formatted(",\"stream\":true"));

        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(eventTypes(r.body())).last().isEqualTo("message_stop");
        assertThat(bedrock.refused).isEmpty();
        assertThat(bedrock.received.get(0).headers().get("authorization")).contains("x-amz-security-token");
    }

    @Test
    void bedrockApiKey_sentAsBearer() throws Exception {
        start(FakeBedrock.bearer("us-east-1", "ABSKbedrockApiKey0123456789", simUrl(), "sk-sim"), """
                    api_key: ${AWS_BEARER_TOKEN_BEDROCK}
                """, Map.of("AWS_BEARER_TOKEN_BEDROCK", "ABSKbedrockApiKey0123456789"));

        HttpResponse<String> r = gateway.call(MESSAGES, HELLO_MESSAGES.formatted(""));

        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(bedrock.refused).isEmpty();
    }

    @Test
    void wrongSecret_bedrockRefusesTheSignature_callerGets502WithoutAnySecret() throws Exception {
        bedrock = FakeBedrock.signed("us-east-1", KEY_ID, SECRET, null, simUrl(), "sk-sim");
        start(bedrock, """
                    aws_access_key_id: ${AWS_ACCESS_KEY_ID}
                    aws_secret_access_key: ${AWS_SECRET_ACCESS_KEY}
                """, Map.of("AWS_ACCESS_KEY_ID", KEY_ID, "AWS_SECRET_ACCESS_KEY", SECRET + "x"));

        HttpResponse<String> r = gateway.call(MESSAGES, HELLO_MESSAGES.formatted(""));

        assertThat(r.statusCode()).isEqualTo(502);
        assertThat(bedrock.refused).isNotEmpty().allMatch(s -> s.startsWith("signature mismatch"));
        assertThat(r.body()).contains("\"type\":\"error\"").doesNotContain(SECRET).doesNotContain("signature");
    }

    @Test
    void streamUsage_everyTokenTypeClaudeReports_isAccountedOnTheRecord() throws Exception {
        String start = MESSAGE_START.replace("\"usage\":{\"input_tokens\":9,\"output_tokens\":1}",
                "\"usage\":{\"input_tokens\":9,\"cache_read_input_tokens\":500,"
                        + "\"cache_creation_input_tokens\":30,\"output_tokens\":1}");
        startSigned(r -> FakeBedrock.Script.eventStream(List.of(FakeBedrock.chunk(start),
                FakeBedrock.chunk(BLOCK_START), FakeBedrock.chunk(delta("Hi")), FakeBedrock.chunk(BLOCK_STOP),
                FakeBedrock.chunk(MESSAGE_DELTA), FakeBedrock.chunk(STOP))));

        HttpResponse<String> r = gateway.call(MESSAGES, HELLO_MESSAGES.formatted(",\"stream\":true"));
        ExchangeRecord rec = records.of(r);

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(rec.provider()).isEqualTo("aws");
        assertThat(rec.uncachedInputTokens()).isEqualTo(9);
        assertThat(rec.cacheReadTokens()).isEqualTo(500);
        assertThat(rec.cacheWriteTokens()).isEqualTo(30);
        assertThat(rec.outputTokens()).isEqualTo(4);
    }

    // ------------------------------------------------------------------ Converse (models other than Claude)

    @Test
    void converse_messagesCaller_requestTranslated_answerAsAnthropicMessage() throws Exception {
        startSigned(r -> null);

        HttpResponse<String> r = gateway.call(MESSAGES, """
                {"model":"llama-aws","max_tokens":64,"system":"Be brief.","temperature":0.2,"stop_sequences":["END"],
                 "messages":[{"role":"user","content":"What is the weather?"},
                  {"role":"assistant","content":[{"type":"tool_use","id":"tu_1","name":"weather","input":{"city":"Oslo"}}]},
                  {"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_1","content":"rain"},
                   {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}],
                 "tools":[{"name":"weather","description":"Weather by city","input_schema":{"type":"object"}}],
                 "tool_choice":{"type":"any"}}""");

        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode answer = JSON.readTree(r.body());
        assertThat(answer.path("type").asText()).isEqualTo("message");
        assertThat(answer.path("content").path(0).path("text").asText()).isEqualTo("Hello from " + LLAMA_ID);
        assertThat(answer.path("stop_reason").asText()).isEqualTo("end_turn");
        assertThat(answer.path("usage").path("input_tokens").asInt()).isEqualTo(12);
        assertThat(answer.path("usage").path("output_tokens").asInt()).isEqualTo(4);
        FakeBedrock.Received sent = bedrock.received.get(0);
        assertThat(sent.path()).isEqualTo(LLAMA_PATH);
        assertThat(bedrock.refused).isEmpty();
        JsonNode body = sent.json();
        assertThat(body.path("system").path(0).path("text").asText()).isEqualTo("Be brief.");
        assertThat(body.path("inferenceConfig").path("maxTokens").asInt()).isEqualTo(64);
        assertThat(body.path("inferenceConfig").path("stopSequences").path(0).asText()).isEqualTo("END");
        assertThat(body.path("messages").path(0).path("content").path(0).path("text").asText())
                .isEqualTo("What is the weather?");
        assertThat(body.path("messages").path(1).path("content").path(0).path("toolUse").path("input")
                .path("city").asText()).isEqualTo("Oslo");
        JsonNode result = body.path("messages").path(2).path("content").path(0).path("toolResult");
        assertThat(result.path("toolUseId").asText()).isEqualTo("tu_1");
        assertThat(result.path("content").path(0).path("text").asText()).isEqualTo("rain");
        assertThat(body.path("messages").path(2).path("content").path(1).path("image").path("format").asText())
                .isEqualTo("png");
        assertThat(body.path("toolConfig").path("tools").path(0).path("toolSpec").path("name").asText())
                .isEqualTo("weather");
        assertThat(body.path("toolConfig").path("toolChoice").has("any")).isTrue();
    }

    @Test
    void converseStream_bothCallerStyles_eventsTranslated() throws Exception {
        startSigned(r -> null);

        HttpResponse<String> m = gateway.call(MESSAGES,
                HELLO_MESSAGES.replace("claude-aws", "llama-aws").formatted(",\"stream\":true"));
        HttpResponse<String> c = gateway.call(CHAT, HELLO_CHAT.replace("claude-aws", "llama-aws")
                .formatted(",\"stream\":true,\"stream_options\":{\"include_usage\":true}"));

        assertThat(m.statusCode()).as(m.body()).isEqualTo(200);
        assertThat(eventTypes(m.body())).containsExactly("message_start", "content_block_start",
                "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop");
        assertThat(m.body()).contains("\"text\":\"from " + LLAMA_ID + "\"").contains("\"stop_reason\":\"end_turn\"");
        assertThat(c.statusCode()).as(c.body()).isEqualTo(200);
        assertThat(c.body()).contains("\"content\":\"Hello \"").contains("\"completion_tokens\":4")
                .endsWith("data: [DONE]\n\n");
        assertThat(bedrock.received).extracting(FakeBedrock.Received::path)
                .containsOnly(LLAMA_PATH + "-stream");
    }

    @Test
    void converseStream_toolUseAndCacheTokens_asAnthropicEventsAndOnTheRecord() throws Exception {
        startSigned(r -> FakeBedrock.Script.eventStream(List.of(
                FakeBedrock.event("messageStart", "{\"role\":\"assistant\"}"),
                FakeBedrock.event("contentBlockStart", "{\"contentBlockIndex\":0,\"start\":{\"toolUse\":"
                        + "{\"toolUseId\":\"tooluse_1\",\"name\":\"weather\"}}}"),
                FakeBedrock.event("contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"toolUse\":"
                        + "{\"input\":\"{\\\"city\\\":\"}}}"),
                FakeBedrock.event("contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"toolUse\":"
                        + "{\"input\":\"\\\"Oslo\\\"}\"}}}"),
                FakeBedrock.event("contentBlockStop", "{\"contentBlockIndex\":0}"),
                FakeBedrock.event("messageStop", "{\"stopReason\":\"tool_use\"}"),
                FakeBedrock.event("metadata", "{\"usage\":{\"inputTokens\":20,\"outputTokens\":7,"
                        + "\"cacheReadInputTokens\":100,\"cacheWriteInputTokens\":8},\"metrics\":{\"latencyMs\":9}}"))));

        HttpResponse<String> m = gateway.call(MESSAGES,
                HELLO_MESSAGES.replace("claude-aws", "llama-aws").formatted(",\"stream\":true"));
        ExchangeRecord rec = records.of(m);

        assertThat(m.statusCode()).as(m.body()).isEqualTo(200);
        assertThat(m.body()).contains("\"type\":\"tool_use\",\"id\":\"tooluse_1\",\"name\":\"weather\"")
                .contains("\"partial_json\":\"{\\\"city\\\":\"").contains("\"stop_reason\":\"tool_use\"");
        assertThat(rec.uncachedInputTokens()).isEqualTo(20);
        assertThat(rec.cacheReadTokens()).isEqualTo(100);
        assertThat(rec.cacheWriteTokens()).isEqualTo(8);
        assertThat(rec.outputTokens()).isEqualTo(7);
    }

    // ------------------------------------------------------------------ errors

    @Test
    void validationException_is400InEachCallersStyle_withBedrocksMessage() throws Exception {
        startSigned(r -> FakeBedrock.Script.error(400, "ValidationException",
                "messages.0.content: Input should be a valid list"));

        HttpResponse<String> m = gateway.call(MESSAGES, HELLO_MESSAGES.formatted(""));
        HttpResponse<String> c = gateway.call(CHAT, HELLO_CHAT.formatted(""));

        assertThat(m.statusCode()).isEqualTo(400);
        JsonNode me = JSON.readTree(m.body());
        assertThat(me.path("type").asText()).isEqualTo("error");
        assertThat(me.path("error").path("type").asText()).isEqualTo("invalid_request_error");
        assertThat(me.path("error").path("message").asText()).contains("Input should be a valid list");
        assertThat(c.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(c.body()).path("error").path("message").asText())
                .contains("Input should be a valid list");
    }

    @Test
    void throttlingExceptionAsTheFirstEvent_is429WithRetryAfter_inEachCallersStyle() throws Exception {
        startSigned(r -> FakeBedrock.Script.eventStream(List.of(
                FakeBedrock.exception("throttlingException", "Too many requests, please wait before trying again."))));

        HttpResponse<String> m = gateway.call(MESSAGES, HELLO_MESSAGES.formatted(",\"stream\":true"));
        HttpResponse<String> c = gateway.call(CHAT, HELLO_CHAT.formatted(",\"stream\":true"));

        assertThat(m.statusCode()).as(m.body()).isEqualTo(429);
        assertThat(m.headers().firstValue("retry-after")).isPresent();
        assertThat(JSON.readTree(m.body()).path("error").path("type").asText()).isEqualTo("rate_limit_error");
        assertThat(m.body()).contains("Too many requests");
        assertThat(c.statusCode()).as(c.body()).isEqualTo(429);
        assertThat(JSON.readTree(c.body()).path("error").path("message").asText()).contains("Too many requests");
        assertThat(bedrock.received).as("a 429 is retried like any provider's (2 retries per request)").hasSize(6);
    }

    @Test
    void exceptionAfterTheFirstEvent_endsTheStreamWithTheStylesErrorEvent() throws Exception {
        startSigned(r -> FakeBedrock.Script.eventStream(List.of(
                FakeBedrock.chunk(MESSAGE_START), FakeBedrock.chunk(BLOCK_START), FakeBedrock.chunk(delta("Hel")),
                FakeBedrock.exception("modelStreamErrorException", "The model stream failed."))));

        HttpResponse<String> m = gateway.call(MESSAGES, HELLO_MESSAGES.formatted(",\"stream\":true"));
        HttpResponse<String> c = gateway.call(CHAT, HELLO_CHAT.formatted(",\"stream\":true"));

        assertThat(m.statusCode()).isEqualTo(200);
        assertThat(eventTypes(m.body())).containsSubsequence("message_start", "content_block_delta")
                .last().isEqualTo("error");
        assertThat(m.body()).contains("The model stream failed.");
        assertThat(c.statusCode()).isEqualTo(200);
        assertThat(c.body()).contains("\"content\":\"Hel\"").contains("\"error\"").contains("The model stream failed.")
                .doesNotContain("[DONE]");
    }

    @Test
    void corruptedCrc_endsTheStreamWithAnErrorEvent() throws Exception {
        byte[] bad = FakeBedrock.chunk(delta("lo"));
        bad[bad.length - 1] ^= 0x01; // the message CRC
        startSigned(r -> FakeBedrock.Script.eventStream(List.of(FakeBedrock.chunk(MESSAGE_START),
                FakeBedrock.chunk(BLOCK_START), FakeBedrock.chunk(delta("Hel")), bad, FakeBedrock.chunk(STOP))));

        HttpResponse<String> m = gateway.call(MESSAGES, HELLO_MESSAGES.formatted(",\"stream\":true"));

        assertThat(m.statusCode()).isEqualTo(200);
        assertThat(eventTypes(m.body())).last().isEqualTo("error");
        assertThat(m.body()).contains("\"text\":\"Hel\"").doesNotContain("\"text\":\"lo\"").doesNotContain("message_stop");
    }

    @Test
    void truncatedMessage_connectionCutInsideAFrame_endsTheStreamWithAnErrorEvent() throws Exception {
        byte[] half = FakeBedrock.chunk(delta("lo"));
        byte[] cut = java.util.Arrays.copyOf(half, half.length / 2);
        startSigned(r -> FakeBedrock.Script.eventStream(List.of(FakeBedrock.chunk(MESSAGE_START),
                FakeBedrock.chunk(BLOCK_START), FakeBedrock.chunk(delta("Hel")), cut)).cutAfter(4));

        HttpResponse<String> m = gateway.call(MESSAGES, HELLO_MESSAGES.formatted(",\"stream\":true"));

        assertThat(m.statusCode()).isEqualTo(200);
        assertThat(eventTypes(m.body())).last().isEqualTo("error");
        assertThat(m.body()).contains("\"text\":\"Hel\"").doesNotContain("message_stop");
    }

    @Test
    void streamCutIntoSingleBytes_givesTheSameEventsAsWhole() throws Exception {
        List<byte[]> frames = List.of(FakeBedrock.chunk(MESSAGE_START), FakeBedrock.chunk(BLOCK_START),
                FakeBedrock.chunk(delta("Hel")), FakeBedrock.chunk(delta("lo \u00e9\u2603")),
                FakeBedrock.chunk(BLOCK_STOP), FakeBedrock.chunk(MESSAGE_DELTA), FakeBedrock.chunk(STOP));
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        frames.forEach(all::writeBytes);
        List<byte[]> bytes = new ArrayList<>();
        for (byte b : all.toByteArray()) {
            bytes.add(new byte[] {b});
        }
        startSigned(r -> r.body().contains("\"max_tokens\":16")
                ? FakeBedrock.Script.eventStream(frames) : FakeBedrock.Script.eventStream(bytes));

        HttpResponse<String> whole = gateway.call(MESSAGES, HELLO_MESSAGES.formatted(",\"stream\":true"));
        HttpResponse<String> pieces = gateway.call(MESSAGES,
                HELLO_MESSAGES.replace("16", "17").formatted(",\"stream\":true"));

        assertThat(whole.statusCode()).isEqualTo(200);
        assertThat(pieces.body()).isEqualTo(whole.body());
        assertThat(eventTypes(whole.body())).containsExactly("message_start", "content_block_start",
                "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop");
        assertThat(whole.body()).contains("\"text\":\"lo \u00e9\u2603\"");
    }

    // ------------------------------------------------------------------ helpers

    static final String MESSAGE_START = "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_bdrk_01\",\"type\":"
            + "\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[],"
            + "\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}";
    static final String BLOCK_START =
            "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}";
    static final String BLOCK_STOP = "{\"type\":\"content_block_stop\",\"index\":0}";
    static final String MESSAGE_DELTA = "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\","
            + "\"stop_sequence\":null},\"usage\":{\"output_tokens\":4}}";
    static final String STOP = "{\"type\":\"message_stop\",\"amazon-bedrock-invocationMetrics\":{\"inputTokenCount\":9,"
            + "\"outputTokenCount\":4,\"invocationLatency\":321,\"firstByteLatency\":120}}";

    static String delta(String text) {
        return "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"
                + "\"" + text + "\"}}";
    }

    static List<String> eventTypes(String sse) {
        List<String> types = new ArrayList<>();
        for (String line : sse.split("\n")) {
            if (line.startsWith("event: ")) {
                types.add(line.substring(7).strip());
            }
        }
        return types;
    }
}
