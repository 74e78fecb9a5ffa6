package io.modelgateway.core.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.config.ProviderType;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a provider's redactor treats as its secrets: the api_key and the secret-looking extra headers. */
class UpstreamTargetSecretsTest {

    private static UpstreamTarget target(String key, Map<String, String> headers) {
        return new UpstreamTarget(new ProviderConfig("p", ProviderType.OPENAI, URI.create("http://h/v1"), key, headers,
                List.of(), 1000, null, null, false));
    }

    @Test
    void apiKeyAndSecretHeaders_areRedacted_otherHeadersAreNot() {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Authorization", "Bearer extra-token-123456");
        headers.put("api-key", "azure-key-abcdef12");
        headers.put("X-Goog-Api-Key", "goog-value-7777777");
        headers.put("OpenAI-Organization", "org-visible-999999");
        UpstreamTarget t = target("plainkey-0000001", headers);
        String text = "plainkey-0000001 extra-token-123456 azure-key-abcdef12 goog-value-7777777 org-visible-999999";
        assertThat(t.redactor.redact(text))
                .isEqualTo("[redacted] [redacted] [redacted] [redacted] org-visible-999999");
    }

    @Test
    void secretHeaderNames_byWhatTheyContain() {
        assertThat(UpstreamTarget.isSecretHeader("x-api-key")).isTrue();
        assertThat(UpstreamTarget.isSecretHeader("Proxy-Authorization")).isTrue();
        assertThat(UpstreamTarget.isSecretHeader("x-session-token")).isTrue();
        assertThat(UpstreamTarget.isSecretHeader("anthropic-beta")).isFalse();
        assertThat(UpstreamTarget.isSecretHeader("HTTP-Referer")).isFalse();
    }

    @Test
    void noKey_shortValues_nothingConfiguredToSearchFor() {
        assertThat(target(null, Map.of()).redactor.secretCount()).isZero();
        assertThat(target("EMPTY", Map.of("x-api-key", "none")).redactor.secretCount()).isZero();
    }
}
