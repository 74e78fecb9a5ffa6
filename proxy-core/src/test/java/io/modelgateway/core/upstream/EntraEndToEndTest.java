package io.modelgateway.core.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.config.AzureSettings;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.testing.AzureOpenAiFake;
import io.modelgateway.core.testing.EntraFake;
import io.modelgateway.core.testing.Eventually;
import io.modelgateway.core.testing.LogLines;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.TestGateway;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An azure_openai provider with an {@code entra} block end to end: a real gateway in front of {@link AzureOpenAiFake},
 * which takes exactly the tokens {@link EntraFake} issued (the Entra fake itself checked by Microsoft's
 * {@code @azure/identity} in {@code EntraFakeTest}). The gateway obtains its tokens by the client-credentials grant,
 * shares one grant among the first requests, refreshes before expiry while requests go on with the valid token (a
 * moved clock), never sends an expired one, and answers a refused grant with a 503 (529 on messages) naming the cause;
 * no secret reaches a caller, a log line, the access log or the metrics.
 */
class EntraEndToEndTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long SECOND = 1_000_000_000L;
    private static final String CHAT = "/api/v1/chat/completions";
    private static final String MESSAGES = "/api/v1/messages";
    private static final String WRONG_SECRET = "Wr0ng~secret.value_0123456789abcdefGHIJ";
    private static final String ANSWER = "Hello from Azure deployment " + AzureOpenAiFake.CHAT_DEPLOYMENT + ".";

    private EntraFake entra;
    private AzureOpenAiFake azure;
    private TestGateway gw;
    private final RecordingObserver records = new RecordingObserver();
    private Path accessLog;
    /** Everything the gateway logs, at every level. */
    private LogLines log;

    @BeforeEach
    void start() throws Exception {
        log = LogLines.of("io.modelgateway");
        entra = EntraFake.start();
        azure = new AzureOpenAiFake();
        azure.trust(entra);
        accessLog = Files.createTempFile("entra-access", ".log");
    }

    @AfterEach
    void stop() {
        if (gw != null) {
            gw.close();
        }
        azure.close();
        entra.close();
        log.close();
    }

    /** A gateway with {@code az-entra} (the right secret), {@code az-wrong} (a wrong one) and {@code az-key}. */
    private void startGateway(String extraProviders, String extraModels) throws Exception {
        gw = TestGateway.start("""
                access_log: %3$s
                keys: [{name: test, key: "${GATEWAY_KEY}", models: ["*"]}]
                providers:
                  az-entra:
                    type: azure_openai
                    base_url: "%1$s"
                    api_version: 2024-10-21
                    cooldown: off
                    entra:
                      tenant_id: %4$s
                      client_id: %5$s
                      client_secret: ${AZ_CLIENT_SECRET}
                      token_url: "%2$s"
                  az-wrong:
                    type: azure_openai
                    base_url: "%1$s"
                    cooldown: off
                    entra: {tenant_id: %4$s, client_id: %5$s, client_secret: "${AZ_WRONG_SECRET}", token_url: "%2$s"}
                  az-key: {type: azure_openai, base_url: "%1$s", api_key: "${AZ_KEY}", cooldown: off}
                %6$s
                models:
                  gpt: {deployments: [{provider: az-entra, model: %7$s}]}
                  gpt-refused: {retries: {max: 0}, deployments: [{provider: az-wrong, model: %7$s}]}
                  gpt-key: {deployments: [{provider: az-key, model: %7$s}]}
                  gpt-fallback: {retries: {max: 0}, deployments: [{provider: az-wrong, model: %7$s}], fallbacks: [gpt-key]}
                %8$s
                """.formatted(azure.endpoint(), entra.tokenUrl(), accessLog, EntraFake.TENANT_ID, EntraFake.CLIENT_ID,
                extraProviders, AzureOpenAiFake.CHAT_DEPLOYMENT, extraModels), records,
                Map.of("AZ_CLIENT_SECRET", EntraFake.CLIENT_SECRET, "AZ_WRONG_SECRET", WRONG_SECRET,
                        "AZ_KEY", AzureOpenAiFake.API_KEY));
    }

    private static String chat(String model, boolean stream) {
        return "{\"model\":\"" + model + "\",\"stream\":" + stream
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}";
    }

    private static String messages(String model, boolean stream) {
        return "{\"model\":\"" + model + "\",\"max_tokens\":64,\"stream\":" + stream
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}";
    }

    private List<CompletableFuture<HttpResponse<String>>> concurrently(int n, String model) {
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            calls.add(gw.http.sendAsync(gw.post(CHAT, chat(model, i % 2 == 0))
                    .header("authorization", "Bearer " + TestGateway.KEY).build(),
                    HttpResponse.BodyHandlers.ofString()));
        }
        return calls;
    }

    private static void allOk(List<CompletableFuture<HttpResponse<String>>> calls) throws Exception {
        for (CompletableFuture<HttpResponse<String>> c : calls) {
            HttpResponse<String> r = c.get(30, TimeUnit.SECONDS);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
    }

    /** The bearer tokens the gateway sent to Azure, in order (its requests carry its user agent). */
    private List<String> tokensSent() {
        return azure.received().stream().filter(r -> String.valueOf(r.headers().get("user-agent"))
                .startsWith("model-gateway/")).map(r -> {
                    assertThat(r.all("api-key")).isEmpty();
                    return r.all("authorization");
                }).map(a -> {
                    assertThat(a).hasSize(1);
                    assertThat(a.get(0)).startsWith("Bearer ");
                    return a.get(0).substring(7);
                }).toList();
    }

    @Test
    void bothCallerStyles_streamAndNot_azureSeesTheEntraToken_theFirstRequestsShareOneGrant() throws Exception {
        startGateway("", "");
        allOk(concurrently(16, "gpt")); // no token yet: all of them wait for the one grant
        assertThat(entra.tokenRequests).hasSize(1);
        assertThat(entra.tokenRequests.get(0)).as("the client-credentials form, as @azure/identity sends it")
                .containsOnlyKeys("grant_type", "client_id", "client_secret", "scope")
                .containsEntry("grant_type", "client_credentials").containsEntry("client_id", EntraFake.CLIENT_ID)
                .containsEntry("client_secret", EntraFake.CLIENT_SECRET)
                .containsEntry("scope", "https://cognitiveservices.azure.com/.default");

        HttpResponse<String> whole = gw.call(CHAT, chat("gpt", false));
        assertThat(JSON.readTree(whole.body()).at("/choices/0/message/content").asText()).isEqualTo(ANSWER);
        ExchangeRecord rec = records.of(whole);
        assertThat(rec.provider()).isEqualTo("az-entra");
        assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
        HttpResponse<String> stream = gw.call(CHAT, chat("gpt", true));
        assertThat(stream.body()).contains("\"content\":\" deployment\"").endsWith("data: [DONE]\n\n");
        HttpResponse<String> translated = gw.call(MESSAGES, messages("gpt", false));
        assertThat(translated.statusCode()).as(translated.body()).isEqualTo(200);
        assertThat(JSON.readTree(translated.body()).at("/content/0/text").asText()).isEqualTo(ANSWER);
        HttpResponse<String> translatedStream = gw.call(MESSAGES, messages("gpt", true));
        assertThat(translatedStream.body()).contains("event: message_stop");

        List<String> sent = tokensSent();
        assertThat(sent).hasSize(20).containsOnly(sent.get(0));
        assertThat(entra.accepts(sent.get(0), EntraFake.AUDIENCE)).isTrue();
        assertThat(azure.received()).allSatisfy(r -> assertThat(r.uri())
                .isEqualTo("/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21"));
        assertThat(entra.tokenRequests).as("still the one grant").hasSize(1);
    }

    @Test
    void movedClock_nearExpiryUnderLoad_requestsGoOnWithTheValidTokenWhileOneRefreshRuns_anExpiredOneIsNeverSent()
            throws Exception {
        AtomicLong now = new AtomicLong(1_000 * SECOND);
        // The gateway's token cache for this application, on a clock the test moves (made before the gateway asks).
        AccessTokens.of(new EntraGrant(new AzureSettings.Entra(EntraFake.TENANT_ID, EntraFake.CLIENT_ID,
                EntraFake.CLIENT_SECRET, AzureSettings.Entra.DEFAULT_SCOPE, URI.create(entra.tokenUrl()))), now::get);
        startGateway("", "");
        allOk(concurrently(1, "gpt"));
        String first = tokensSent().get(0);
        assertThat(entra.tokenRequests).hasSize(1);

        now.addAndGet(3599 * SECOND - 200 * SECOND); // 200 s left: inside the refresh window, still valid
        entra.hold(); // the refresh will not be answered until released
        allOk(concurrently(40, "gpt"));
        Eventually.until(Duration.ofSeconds(10), () -> entra.tokenRequests.size() == 2);
        assertThat(entra.tokenRequests).as("one refresh for forty requests, none waiting for it").hasSize(2);
        assertThat(tokensSent()).hasSize(41).containsOnly(first);

        entra.release();
        Eventually.until(Duration.ofSeconds(10), () -> entra.issuedCount() == 2);
        Eventually.until(Duration.ofSeconds(10), () -> {
            try {
                allOk(concurrently(1, "gpt"));
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            List<String> sent = tokensSent();
            return !sent.get(sent.size() - 1).equals(first);
        });
        List<String> sent = tokensSent();
        String second = sent.get(sent.size() - 1);
        assertThat(entra.tokenRequests).hasSize(2);

        now.addAndGet(3599 * SECOND); // the second token has expired by the gateway's clock (not yet by Azure's)
        allOk(concurrently(8, "gpt"));
        List<String> after = tokensSent().subList(sent.size(), sent.size() + 8);
        assertThat(after).as("the expired token is never sent: these waited for a new grant")
                .doesNotContain(second, first).containsOnly(after.get(0));
        assertThat(entra.tokenRequests).hasSize(3);
    }

    @Test
    void aRefusedGrant_is503InTheCallersStyleNamingTheCause_anotherDeploymentServes_noSecretAnywhere()
            throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        startGateway("""
                  az-down:
                    type: azure_openai
                    base_url: "%s"
                    entra: {tenant_id: t1, client_id: %s, client_secret: "${AZ_CLIENT_SECRET}",
                            token_url: "http://127.0.0.1:%d/t1/oauth2/v2.0/token"}
                """.formatted(azure.endpoint(), EntraFake.CLIENT_ID, closedPort),
                "  gpt-down: {retries: {max: 0}, deployments: [{provider: az-down, model: gpt-4o-prod}]}\n");
        String cause = "the provider's Microsoft Entra ID access token could not be obtained (the token endpoint "
                + "answered 401 invalid_client AADSTS7000215)";

        HttpResponse<String> chat = gw.call(CHAT, chat("gpt-refused", true));
        assertThat(chat.statusCode()).isEqualTo(503);
        assertThat(chat.headers().firstValue("content-type").orElse("")).startsWith("application/json");
        assertThat(chat.headers().firstValue("retry-after")).isPresent();
        JsonNode error = JSON.readTree(chat.body()).path("error");
        assertThat(error.path("code").asText()).isEqualTo("overloaded");
        assertThat(error.path("message").asText()).contains(cause);
        assertThat(records.of(chat).provider()).isEqualTo("az-wrong");

        HttpResponse<String> msg = gw.call(MESSAGES, messages("gpt-refused", false));
        assertThat(msg.statusCode()).isEqualTo(529);
        JsonNode body = JSON.readTree(msg.body());
        assertThat(body.at("/error/type").asText()).isEqualTo("overloaded_error");
        assertThat(body.at("/error/message").asText()).contains(cause);

        HttpResponse<String> down = gw.call(CHAT, chat("gpt-down", false));
        assertThat(down.statusCode()).isEqualTo(503);
        assertThat(JSON.readTree(down.body()).at("/error/message").asText()).contains("the provider's Microsoft Entra "
                + "ID access token could not be obtained (the token endpoint could not be reached (ConnectException))");

        HttpResponse<String> fallback = gw.call(CHAT, chat("gpt-fallback", false));
        assertThat(fallback.statusCode()).as(fallback.body()).isEqualTo(200);
        assertThat(JSON.readTree(fallback.body()).at("/choices/0/message/content").asText()).isEqualTo(ANSWER);

        assertThat(azure.received()).as("nothing reached Azure without a token; the key's fallback did")
                .singleElement().satisfies(r -> assertThat(r.all("api-key")).containsExactly(AzureOpenAiFake.API_KEY));
        assertThat(entra.tokenRequests).isNotEmpty()
                .allSatisfy(f -> assertThat(f).containsEntry("client_secret", WRONG_SECRET));

        String metrics = gw.get("/metrics").body();
        Eventually.until(Duration.ofSeconds(5), () -> {
            try {
                return Files.readString(accessLog).lines().count() >= 4;
            } catch (java.io.IOException e) {
                return false;
            }
        });
        String everything = String.join("\n", log.formatted) + "\n" + Files.readString(accessLog) + "\n" + metrics + "\n"
                + chat.body() + msg.body() + down.body() + fallback.body() + chat.headers() + msg.headers();
        assertThat(log.formatted).anySatisfy(l -> assertThat(l).contains("Entra application " + EntraFake.CLIENT_ID
                + " (tenant " + EntraFake.TENANT_ID + "): the token endpoint answered 401 invalid_client AADSTS7000215"));
        // The form-encoded secret too: a log of the token request's body would show it so.
        assertThat(everything).doesNotContain(WRONG_SECRET).doesNotContain(EntraFake.CLIENT_SECRET)
                .doesNotContain(URLEncoder.encode(WRONG_SECRET, StandardCharsets.UTF_8));
    }
}
