package io.modelgateway.core.google;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.auth.oauth2.AccessToken;
import com.google.auth.oauth2.ServiceAccountCredentials;
import com.google.genai.Client;
import com.google.genai.ResponseStream;
import com.google.genai.types.ContentEmbedding;
import com.google.genai.types.EmbedContentConfig;
import com.google.genai.types.EmbedContentResponse;
import com.google.genai.types.FunctionDeclaration;
import com.google.genai.types.GenerateContentConfig;
import com.google.genai.types.GenerateContentResponse;
import com.google.genai.types.HttpOptions;
import com.google.genai.types.Schema;
import com.google.genai.types.Tool;
import io.modelgateway.core.testing.GoogleFake;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fake Google upstream ({@link GoogleFake}) checked by Google's own code, never by the gateway's: the Gen AI
 * SDK for Java (google-genai) calls its Gemini API and Vertex AI endpoints, streams included, and reads its answers;
 * Google's auth library (google-auth-library-oauth2-http) obtains a token from its token endpoint with the service
 * account the fake generated, so the JWT grant the fake accepts is the one Google's library makes.
 */
class GoogleFakeTest {
    private static GoogleFake fake;
    @TempDir
    static Path dir;

    @BeforeAll
    static void start() throws Exception {
        fake = GoogleFake.start();
    }

    @AfterAll
    static void stop() {
        fake.close();
    }

    private static Client geminiClient(String key) {
        return Client.builder().apiKey(key).httpOptions(HttpOptions.builder().baseUrl(fake.url()).build()).build();
    }

    private static ServiceAccountCredentials account() throws Exception {
        Path sa = fake.writeServiceAccount(Files.createTempDirectory(dir, "sa"));
        try (InputStream in = Files.newInputStream(sa)) {
            return (ServiceAccountCredentials) ServiceAccountCredentials.fromStream(in)
                    .createScoped(List.of("https://www.googleapis.com/auth/cloud-platform"));
        }
    }

    @Test
    void geminiApi_googleSdkReadsTheFakesAnswerAndStream() {
        try (Client client = geminiClient(GoogleFake.API_KEY)) {
            GenerateContentResponse r = client.models.generateContent("gemini-2.5-flash", "hello there", null);
            assertThat(r.text()).isEqualTo("Gemini says: hello there");
            assertThat(r.usageMetadata().orElseThrow().cachedContentTokenCount()).contains(8);
            assertThat(r.usageMetadata().orElseThrow().thoughtsTokenCount()).contains(5);
            StringBuilder text = new StringBuilder();
            List<GenerateContentResponse> chunks = new ArrayList<>();
            try (ResponseStream<GenerateContentResponse> s =
                    client.models.generateContentStream("gemini-2.5-flash", "stream me", null)) {
                for (GenerateContentResponse c : s) {
                    chunks.add(c);
                    text.append(c.text());
                }
            }
            assertThat(chunks).hasSize(3);
            assertThat(text.toString()).isEqualTo("Gemini says: stream me");
            assertThat(chunks.get(2).usageMetadata().orElseThrow().candidatesTokenCount()).contains(7);
        }
        GoogleFake.Seen last = fake.seen.stream().reduce((a, b) -> b).orElseThrow();
        assertThat(last.path()).isEqualTo("/v1/models/gemini-2.5-flash:streamGenerateContent");
        assertThat(last.query()).contains("alt=sse");
    }

    @Test
    void geminiApi_functionDeclarationsGetAFunctionCall_andABadKeyGoogleError() {
        Tool tool = Tool.builder().functionDeclarations(FunctionDeclaration.builder().name("get_weather")
                .description("weather").parameters(Schema.builder().type("OBJECT")
                        .properties(Map.of("city", Schema.builder().type("STRING").build())).build()).build())
                .build();
        try (Client client = geminiClient(GoogleFake.API_KEY)) {
            GenerateContentResponse r = client.models.generateContent("gemini-2.5-flash", "weather in Paris?",
                    GenerateContentConfig.builder().tools(tool).build());
            assertThat(r.functionCalls()).hasSize(1);
            assertThat(r.functionCalls().get(0).name()).contains("get_weather");
            assertThat(r.functionCalls().get(0).args().orElseThrow()).containsEntry("city", "Paris");
        }
        try (Client client = geminiClient("AIza-wrong")) {
            assertThatThrownBy(() -> client.models.generateContent("gemini-2.5-flash", "hi", null))
                    .hasMessageContaining("API key not valid");
        }
    }

    @Test
    void vertex_googleAuthLibraryGetsATokenFromTheFake_andTheSdkCallsVertexPathsWithIt() throws Exception {
        ServiceAccountCredentials creds = account();
        int before = fake.tokenRequests();
        AccessToken token = creds.refreshAccessToken();
        assertThat(token.getTokenValue()).startsWith("ya29.fake-");
        assertThat(fake.tokenRequests()).isEqualTo(before + 1);
        try (Client client = Client.builder().vertexAI(true).project(GoogleFake.PROJECT).location(GoogleFake.LOCATION)
                .credentials(creds).httpOptions(HttpOptions.builder().baseUrl(fake.url()).build()).build()) {
            GenerateContentResponse r = client.models.generateContent("gemini-2.5-pro", "on vertex", null);
            assertThat(r.text()).isEqualTo("Gemini says: on vertex");
            StringBuilder text = new StringBuilder();
            try (ResponseStream<GenerateContentResponse> s =
                    client.models.generateContentStream("gemini-2.5-pro", "vertex stream", null)) {
                for (GenerateContentResponse c : s) {
                    text.append(c.text());
                }
            }
            assertThat(text.toString()).isEqualTo("Gemini says: vertex stream");
        }
        GoogleFake.Seen last = fake.seen.stream().reduce((a, b) -> b).orElseThrow();
        assertThat(last.path()).isEqualTo("/v1beta1/projects/test-project/locations/us-east5/publishers/google/models/"
                + "gemini-2.5-pro:streamGenerateContent");
        assertThat(last.authorization()).startsWith("Bearer ya29.fake-");
    }

    /** The fake's vector for a text, as the SDK reads it (a list of floats). */
    private static List<Float> expected(String text, int dimensions) {
        List<Float> v = new ArrayList<>();
        for (float f : GoogleFake.vector(text, dimensions)) {
            v.add(f);
        }
        return v;
    }

    @Test
    void geminiApi_embedContent_batchEmbedContentsAnsweredInOrder_readByTheSdk() {
        try (Client client = geminiClient(GoogleFake.API_KEY)) {
            EmbedContentResponse r = client.models.embedContent("gemini-embedding-001",
                    List.of("first text", "the second one"), EmbedContentConfig.builder().outputDimensionality(8).build());
            List<ContentEmbedding> e = r.embeddings().orElseThrow();
            assertThat(e).hasSize(2);
            assertThat(e.get(0).values().orElseThrow()).isEqualTo(expected("first text", 8));
            assertThat(e.get(1).values().orElseThrow()).isEqualTo(expected("the second one", 8));
        }
        GoogleFake.Seen last = fake.seen.stream().reduce((a, b) -> b).orElseThrow();
        assertThat(last.path()).isEqualTo("/v1/models/gemini-embedding-001:batchEmbedContents");
        assertThat(last.body().path("requests").get(1).path("model").asText()).isEqualTo("models/gemini-embedding-001");
        assertThat(last.body().path("requests").get(1).path("outputDimensionality").asInt()).isEqualTo(8);
    }

    @Test
    void vertex_embedContent_predictAnsweredWithStatistics_readByTheSdk() throws Exception {
        try (Client client = Client.builder().vertexAI(true).project(GoogleFake.PROJECT).location(GoogleFake.LOCATION)
                .credentials(account()).httpOptions(HttpOptions.builder().baseUrl(fake.url()).build()).build()) {
            EmbedContentResponse r = client.models.embedContent("text-embedding-005",
                    List.of("alpha beta gamma", "delta"), null);
            List<ContentEmbedding> e = r.embeddings().orElseThrow();
            assertThat(e).hasSize(2);
            assertThat(e.get(0).values().orElseThrow()).isEqualTo(expected("alpha beta gamma",
                    GoogleFake.DEFAULT_DIMENSIONS));
            assertThat(e.get(0).statistics().orElseThrow().tokenCount()).contains(3f);
            assertThat(e.get(1).statistics().orElseThrow().tokenCount()).contains(1f);
            EmbedContentResponse shorter = client.models.embedContent("text-embedding-005", "one",
                    EmbedContentConfig.builder().outputDimensionality(4).build());
            assertThat(shorter.embeddings().orElseThrow().get(0).values().orElseThrow()).isEqualTo(expected("one", 4));
        }
        GoogleFake.Seen last = fake.seen.stream().reduce((a, b) -> b).orElseThrow();
        assertThat(last.path()).isEqualTo("/v1beta1/projects/test-project/locations/us-east5/publishers/google/models/"
                + "text-embedding-005:predict");
        assertThat(last.body().path("instances").get(0).path("content").asText()).isEqualTo("one");
        assertThat(last.body().path("parameters").path("outputDimensionality").asInt()).isEqualTo(4);
        assertThat(last.authorization()).startsWith("Bearer ya29.fake-");
    }

    @Test
    void vertex_aTokenSignedWithAnotherKeyIsRefused() throws Exception {
        // The fake's check is real: a second fake's (other) key signs a grant the first fake must refuse.
        try (GoogleFake other = GoogleFake.start()) {
            Path sa = other.writeServiceAccount(Files.createTempDirectory(dir, "other"));
            String json = Files.readString(sa).replace(other.tokenUri(), fake.tokenUri());
            ServiceAccountCredentials creds = (ServiceAccountCredentials) ServiceAccountCredentials
                    .fromStream(new java.io.ByteArrayInputStream(json.getBytes()))
                    .createScoped(List.of("https://www.googleapis.com/auth/cloud-platform"));
            assertThatThrownBy(creds::refreshAccessToken).hasMessageContaining("Invalid JWT Signature");
        }
    }
}
