package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.testing.AzureOpenAiFake;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.ScriptedUpstream.Received;
import io.modelgateway.core.testing.TestGateway;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An azure_openai provider in the gateway's machinery, against {@link AzureOpenAiFake} (itself checked by the openai
 * SDK's AzureOpenAI client in {@code azure.test.mjs}): the exchange record's provider, deployment and every token
 * type Azure reports (cache reads, reasoning), pass-through and translated, stream or not; Azure's 429 retried on the
 * model's other deployment, or relayed in the caller's style with its {@code Retry-After}; a filtered prompt as a 400
 * in the caller's style; what went upstream (the deployment as the body's model, the provider's key alone).
 */
class AzureOpenAiEndToEndTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CHAT = "/api/v1/chat/completions";
    private static final String MESSAGES = "/api/v1/messages";

    private static final String WRONG_KEY = "0000ffff0000ffff0000ffff0000ffff";

    private static AzureOpenAiFake azure;
    private static TestGateway gw;
    private static final RecordingObserver records = new RecordingObserver();

    @BeforeAll
    static void start() throws Exception {
        azure = new AzureOpenAiFake();
        gw = TestGateway.start("""
                keys: [{name: test, key: "${GATEWAY_KEY}", models: ["*"]}]
                providers:
                  az: {type: azure_openai, base_url: "%1$s", api_key: "${AZ_KEY}", api_version: 2024-10-21, cooldown: off}
                  az-v1: {type: azure_openai, base_url: "%1$s", api_key: "${AZ_KEY}", cooldown: off}
                  az-entra: {type: azure_openai, base_url: "%1$s", entra_token: "${AZ_TOKEN}", cooldown: off, forward_headers: ["*"]}
                  az-wrong: {type: azure_openai, base_url: "%1$s", api_key: "${AZ_WRONG_KEY}", api_version: 2024-10-21, cooldown: off}
                models:
                  gpt: {deployments: [{provider: az, model: %2$s}]}
                  gpt-two: {retries: {max: 1, backoff_ms: 1}, deployments: [{provider: az, model: %2$s}, {provider: az-v1, model: %2$s}]}
                  gpt-once: {retries: {max: 0}, deployments: [{provider: az, model: %2$s}]}
                  gpt-entra: {deployments: [{provider: az-entra, model: %2$s}]}
                  gpt-wrong-key: {retries: {max: 0}, deployments: [{provider: az-wrong, model: %2$s}]}
                  gpt-missing: {retries: {max: 0}, deployments: [{provider: az, model: no-such-deployment}]}
                """.formatted(azure.endpoint(), AzureOpenAiFake.CHAT_DEPLOYMENT), records,
                Map.of("AZ_KEY", AzureOpenAiFake.API_KEY, "AZ_WRONG_KEY", WRONG_KEY,
                        "AZ_TOKEN", AzureOpenAiFake.ENTRA_TOKEN));
    }

    @AfterAll
    static void stop() {
        gw.close();
        azure.close();
    }

    @BeforeEach
    void clear() {
        records.clear();
        azure.throttleNext(0);
    }

    private static String chat(String model, String prompt, boolean stream) {
        return "{\"model\":\"" + model + "\",\"stream\":" + stream
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"" + prompt + "\"}]}";
    }

    private static String messages(String model, String prompt, boolean stream) {
        return "{\"model\":\"" + model + "\",\"max_tokens\":64,\"stream\":" + stream
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"" + prompt + "\"}]}";
    }

    private static Received lastFromGateway() {
        List<Received> all = azure.received();
        return all.get(all.size() - 1);
    }

    private static void assertAzureTokens(ExchangeRecord rec) {
        assertThat(rec.provider()).isEqualTo("az");
        assertThat(rec.deployment()).contains(AzureOpenAiFake.CHAT_DEPLOYMENT);
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.UPSTREAM);
        assertThat(rec.cachedInputTokens()).isEqualTo(AzureOpenAiFake.CACHED_TOKENS);
        assertThat(rec.uncachedInputTokens()).isPositive();
        assertThat(rec.reasoningTokens()).isEqualTo(AzureOpenAiFake.REASONING_TOKENS);
        assertThat(rec.outputTokens()).isEqualTo(5 + AzureOpenAiFake.REASONING_TOKENS);
    }

    @Test
    void chat_passThrough_contentFilterResultsKept_deploymentAsModel_everyTokenTypeRecorded() throws Exception {
        HttpResponse<String> r = gw.call(CHAT, chat("gpt", "CACHED_PROMPT hello", false));
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.at("/prompt_filter_results/0/content_filter_results/hate/severity").asText()).isEqualTo("safe");
        assertThat(body.at("/choices/0/content_filter_results/violence/filtered").asBoolean(true)).isFalse();
        assertThat(body.at("/usage/prompt_tokens_details/cached_tokens").asInt())
                .isEqualTo(AzureOpenAiFake.CACHED_TOKENS);
        ExchangeRecord rec = records.of(r);
        assertAzureTokens(rec);
        assertThat(rec.outcome()).isEqualTo(Outcome.DONE);

        Received sent = lastFromGateway();
        assertThat(sent.uri()).isEqualTo("/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21");
        assertThat(JSON.readTree(sent.body()).path("model").asText()).isEqualTo(AzureOpenAiFake.CHAT_DEPLOYMENT);
        assertThat(sent.all("api-key")).containsExactly(AzureOpenAiFake.API_KEY);
        assertThat(sent.all("authorization")).isEmpty();
    }

    /**
     * Contract 12.2: an azure_openai provider gets a Responses request as the chat request it means, on its deployment
     * path; the caller gets a response object with Azure's cache reads and reasoning in the Responses usage fields.
     */
    @Test
    void responses_translatedToAzureChat_usageInResponsesFields() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/responses",
                "{\"model\":\"gpt\",\"input\":\"CACHED_PROMPT hello\",\"max_output_tokens\":64}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.path("object").asText()).isEqualTo("response");
        assertThat(body.path("output_text").asText()).isNotEmpty();
        assertThat(body.at("/usage/input_tokens_details/cached_tokens").asInt()).isEqualTo(AzureOpenAiFake.CACHED_TOKENS);
        assertThat(body.at("/usage/output_tokens_details/reasoning_tokens").asInt())
                .isEqualTo(AzureOpenAiFake.REASONING_TOKENS);
        ExchangeRecord rec = records.of(r);
        assertAzureTokens(rec);
        assertThat(rec.endpointLabel()).isEqualTo("responses");
        Received sent = lastFromGateway();
        assertThat(sent.uri()).isEqualTo("/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21");
        assertThat(JSON.readTree(sent.body()).at("/messages/0/content").asText()).isEqualTo("CACHED_PROMPT hello");
    }

    @Test
    void chatStream_usageAskedForAndWithheld_tokensRecorded() throws Exception {
        HttpResponse<String> r = gw.call(CHAT, chat("gpt", "CACHED_PROMPT hello", true));
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("\"prompt_filter_results\"").endsWith("data: [DONE]\n\n")
                .doesNotContain("\"cached_tokens\":1024"); // the caller did not ask for the usage chunk
        assertThat(JSON.readTree(lastFromGateway().body()).at("/stream_options/include_usage").asBoolean()).isTrue();
        assertAzureTokens(records.of(r));
    }

    @Test
    void messages_translated_wholeAndStream_cacheReadsInAnthropicsFields() throws Exception {
        HttpResponse<String> whole = gw.call(MESSAGES, messages("gpt", "CACHED_PROMPT hello", false));
        assertThat(whole.statusCode()).isEqualTo(200);
        JsonNode m = JSON.readTree(whole.body());
        assertThat(m.path("type").asText()).isEqualTo("message");
        assertThat(m.at("/content/0/text").asText()).isEqualTo("Hello from Azure deployment gpt-4o-prod.");
        assertThat(m.at("/usage/cache_read_input_tokens").asInt()).isEqualTo(AzureOpenAiFake.CACHED_TOKENS);
        assertAzureTokens(records.of(whole));

        HttpResponse<String> stream = gw.call(MESSAGES, messages("gpt", "CACHED_PROMPT hello", true));
        assertThat(stream.statusCode()).isEqualTo(200);
        assertThat(stream.body()).startsWith("event: message_start").contains("event: message_stop")
                .contains("\"cache_read_input_tokens\":" + AzureOpenAiFake.CACHED_TOKENS)
                .doesNotContain("prompt_filter_results");
        assertAzureTokens(records.of(stream));
    }

    @Test
    void throttled_retriedOnTheOtherDeployment_callerSeesOneAnswer() throws Exception {
        azure.throttleNext(1);
        HttpResponse<String> r = gw.call(CHAT, chat("gpt-two", "hello", false));
        assertThat(r.statusCode()).isEqualTo(200);
        ExchangeRecord rec = records.of(r);
        assertThat(rec.attempts()).isEqualTo(2);
        assertThat(rec.retriedFailures()).hasSize(1);
        assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
        // One attempt on each path form: the deployment path and the v1 path.
        List<String> uris = azure.received().subList(azure.received().size() - 2, azure.received().size()).stream()
                .map(Received::uri).toList();
        assertThat(uris).containsExactlyInAnyOrder(
                "/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21",
                "/openai/v1/chat/completions");
    }

    @Test
    void throttled_noRetryLeft_isA429InTheCallersStyle_withRetryAfter() throws Exception {
        azure.throttleNext(2);
        HttpResponse<String> chat = gw.call(CHAT, chat("gpt-once", "hello", true));
        assertThat(chat.statusCode()).isEqualTo(429);
        assertThat(chat.headers().firstValue("retry-after")).hasValue("1");
        assertThat(JSON.readTree(chat.body()).at("/error/code").asText()).isEqualTo("429"); // Azure's, as sent

        HttpResponse<String> msg = gw.call(MESSAGES, messages("gpt-once", "hello", true));
        assertThat(msg.statusCode()).isEqualTo(429);
        assertThat(msg.headers().firstValue("retry-after")).hasValue("1");
        JsonNode e = JSON.readTree(msg.body());
        assertThat(e.path("type").asText()).isEqualTo("error");
        assertThat(e.at("/error/type").asText()).isEqualTo("rate_limit_error");
        assertThat(msg.body()).doesNotContain(AzureOpenAiFake.API_KEY);
    }

    @Test
    void filteredPrompt_isA400_azuresBodyForChat_invalidRequestForMessages() throws Exception {
        HttpResponse<String> chat = gw.call(CHAT, chat("gpt", "FILTER_PROMPT now", false));
        assertThat(chat.statusCode()).isEqualTo(400);
        JsonNode ce = JSON.readTree(chat.body());
        assertThat(ce.at("/error/code").asText()).isEqualTo("content_filter");
        assertThat(ce.at("/error/innererror/code").asText()).isEqualTo("ResponsibleAIPolicyViolation");

        HttpResponse<String> msg = gw.call(MESSAGES, messages("gpt", "FILTER_PROMPT now", false));
        assertThat(msg.statusCode()).isEqualTo(400);
        JsonNode me = JSON.readTree(msg.body());
        assertThat(me.at("/error/type").asText()).isEqualTo("invalid_request_error");
        assertThat(me.at("/error/message").asText()).contains("content management policy");
    }

    @Test
    void filteredCompletion_chatKeepsContentFilterFinish_messagesStopsForRefusal() throws Exception {
        HttpResponse<String> chat = gw.call(CHAT, chat("gpt", "FILTER_COMPLETION", false));
        assertThat(chat.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(chat.body()).at("/choices/0/finish_reason").asText()).isEqualTo("content_filter");

        HttpResponse<String> msg = gw.call(MESSAGES, messages("gpt", "FILTER_COMPLETION", false));
        assertThat(msg.statusCode()).isEqualTo(200);
        JsonNode m = JSON.readTree(msg.body());
        assertThat(m.path("stop_reason").asText()).isEqualTo("refusal");
        assertThat(m.path("content")).isEmpty();
    }

    @Test
    void keyRefusedByAzure_isA502InTheCallersStyle_neverA401_andNoKeyInTheBody() throws Exception {
        HttpResponse<String> chat = gw.call(CHAT, chat("gpt-wrong-key", "hello", false));
        assertThat(chat.statusCode()).isEqualTo(502);
        assertThat(lastFromGateway().all("api-key")).containsExactly(WRONG_KEY);
        HttpResponse<String> msg = gw.call(MESSAGES, messages("gpt-wrong-key", "hello", true));
        assertThat(msg.statusCode()).isEqualTo(502);
        assertThat(JSON.readTree(msg.body()).path("type").asText()).isEqualTo("error");
        assertThat(chat.body() + msg.body()).doesNotContain(WRONG_KEY).doesNotContain(AzureOpenAiFake.API_KEY)
                .doesNotContain(TestGateway.KEY);
    }

    @Test
    void unknownDeployment_isAzures404_passedToChat_notFoundForMessages() throws Exception {
        HttpResponse<String> chat = gw.call(CHAT, chat("gpt-missing", "hello", false));
        assertThat(chat.statusCode()).isEqualTo(404);
        assertThat(JSON.readTree(chat.body()).at("/error/code").asText()).isEqualTo("DeploymentNotFound");
        assertThat(lastFromGateway().uri())
                .isEqualTo("/openai/deployments/no-such-deployment/chat/completions?api-version=2024-10-21");
        HttpResponse<String> msg = gw.call(MESSAGES, messages("gpt-missing", "hello", false));
        assertThat(msg.statusCode()).isEqualTo(404);
        assertThat(JSON.readTree(msg.body()).at("/error/type").asText()).isEqualTo("not_found_error");
    }

    @Test
    void countTokens_isCountedByTheGateway_nothingSentToAzure() throws Exception {
        int before = azure.received().size();
        HttpResponse<String> r = gw.call(MESSAGES + "/count_tokens",
                "{\"model\":\"gpt\",\"messages\":[{\"role\":\"user\",\"content\":\"How many tokens is this?\"}]}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(JSON.readTree(r.body()).path("input_tokens").asInt()).isPositive();
        assertThat(azure.received()).hasSize(before);
    }

    @Test
    void hotReload_newApiVersionAndPathForm_takeEffectOnTheNextRequest() throws Exception {
        String yaml = """
                keys: [{name: test, key: "${GATEWAY_KEY}", models: ["*"]}]
                providers:
                  az: {type: azure_openai, base_url: "%s", api_key: "${AZ_KEY}"%s}
                models:
                  gpt: {deployments: [{provider: az, model: %s}]}
                """;
        Map<String, String> env = Map.of("AZ_KEY", AzureOpenAiFake.API_KEY, "GATEWAY_KEY", TestGateway.KEY);
        try (TestGateway g = TestGateway.start(yaml.formatted(azure.endpoint(), ", api_version: 2024-10-21",
                AzureOpenAiFake.CHAT_DEPLOYMENT), null, env)) {
            assertThat(g.call(CHAT, chat("gpt", "hello", false)).statusCode()).isEqualTo(200);
            assertThat(lastFromGateway().uri()).endsWith("?api-version=2024-10-21");

            g.server().context().swap(io.modelgateway.core.config.ConfigLoader.parse("access_log: off\n"
                    + yaml.formatted(azure.endpoint(), ", api_version: 2025-04-01-preview",
                            AzureOpenAiFake.CHAT_DEPLOYMENT), "test.yaml", env, "127.0.0.1:0"));
            assertThat(g.call(CHAT, chat("gpt", "hello", false)).statusCode()).isEqualTo(200);
            assertThat(lastFromGateway().uri())
                    .isEqualTo("/openai/deployments/gpt-4o-prod/chat/completions?api-version=2025-04-01-preview");

            g.server().context().swap(io.modelgateway.core.config.ConfigLoader.parse("access_log: off\n"
                    + yaml.formatted(azure.endpoint(), "", AzureOpenAiFake.CHAT_DEPLOYMENT), "test.yaml", env,
                    "127.0.0.1:0"));
            assertThat(g.call(CHAT, chat("gpt", "hello", false)).statusCode()).isEqualTo(200);
            assertThat(lastFromGateway().uri()).isEqualTo("/openai/v1/chat/completions");
        }
    }

    @Test
    void forwardEveryHeader_stillNeverForwardsACallersCredential_theEntraTokenAloneGoesUp() throws Exception {
        // A caller using Azure's own SDK client against the gateway sends its gateway key as api-key.
        HttpResponse<String> r = gw.call(CHAT, chat("gpt-entra", "hello", false), "api-key", TestGateway.KEY,
                "x-custom", "kept");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        Received sent = lastFromGateway();
        assertThat(sent.uri()).isEqualTo("/openai/v1/chat/completions");
        assertThat(sent.all("authorization")).containsExactly("Bearer " + AzureOpenAiFake.ENTRA_TOKEN);
        assertThat(sent.all("api-key")).isEmpty();
        assertThat(sent.headers().get("x-custom")).isEqualTo("kept");
    }
}
