package io.modelgateway.core.sdk;

import io.modelgateway.core.testing.GoogleFake;
import io.modelgateway.core.testing.TestGateway;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Google providers through the official Node SDKs ({@code src/test/node/google.test.mjs}): the openai and
 * Anthropic SDKs drive the gateway with {@link GoogleFake} behind it (itself checked by Google's own SDK and auth
 * library in {@code GoogleFakeTest}) — a {@code gemini} provider ({@code gem-flash}), a {@code vertex} provider's
 * Gemini model ({@code vx-pro}) and Claude on Vertex ({@code vx-claude}): create, stream, tool call and tool
 * result round trips, usage by type.
 */
class GoogleSdkTest {
    private static GoogleFake google;
    private static TestGateway gateway;

    @BeforeAll
    static void startFakeAndGateway() throws Exception {
        OfficialSdkCompatibilityTest.installNodePackagesIfStale();
        google = GoogleFake.start();
        String providers = """
                  google-gemini: {type: gemini, base_url: "%s", api_key: "${GEMINI_API_KEY}"}
                  google-vertex: {type: vertex, base_url: "%s", project: %s, location: %s, credentials_file: "%s"}
                """.formatted(google.url(), google.url(), GoogleFake.PROJECT, GoogleFake.LOCATION,
                google.writeServiceAccount(Files.createTempDirectory("sdk-vertex")));
        String models = """
                  gem-flash: {deployments: [{provider: google-gemini, model: gemini-2.5-flash}]}
                  vx-pro: {deployments: [{provider: google-vertex, model: gemini-2.5-pro}]}
                  vx-claude: {deployments: [{provider: google-vertex, model: "claude-sonnet-4-5@20250929"}]}
                  vx-embed: {type: embedding, supports_dimensions: true,
                             deployments: [{provider: google-vertex, model: text-embedding-005}]}
                  gem-embed: {type: embedding, supports_dimensions: true,
                              deployments: [{provider: google-gemini, model: gemini-embedding-001}]}
                """;
        gateway = TestGateway.start(TestGateway.simulatorConfig(providers, models), null,
                Map.of("GEMINI_API_KEY", GoogleFake.API_KEY));
    }

    @AfterAll
    static void stop() {
        if (gateway != null) {
            gateway.close();
        }
        if (google != null) {
            google.close();
        }
    }

    @Test
    void openaiAndAnthropicSdksOnGeminiVertexAndClaudeOnVertex_allPass() throws Exception {
        // (3 openai + 3 Anthropic SDK tests) x 2 Gemini models + 2 on Claude on Vertex + 3 embeddings tests x 2.
        Map<String, String> vars = new HashMap<>();
        vars.put("GATEWAY_GOOGLE_MODELS", "gem-flash,vx-pro");
        vars.put("GATEWAY_VERTEX_CLAUDE_MODEL", "vx-claude");
        vars.put("GATEWAY_GOOGLE_EMBED_MODELS", "vx-embed,gem-embed");
        // gateway-env.mjs, shared by every SDK test file, asks for these too
        vars.put("GATEWAY_CHAT_MODELS", "gem-flash");
        vars.put("GATEWAY_EMBED_MODELS", "sim-embed");
        vars.put("GATEWAY_MESSAGES_MODELS", "gem-flash");
        OfficialSdkCompatibilityTest.runNodeTests("google.test.mjs", gateway.port(), vars, 20);
    }
}
