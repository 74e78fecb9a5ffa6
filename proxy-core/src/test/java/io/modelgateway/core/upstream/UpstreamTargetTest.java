package io.modelgateway.core.upstream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.config.ProviderType;
import java.net.URI;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The per-provider parts of an upstream request, worked out once: what every request then carries. */
class UpstreamTargetTest {

    private static ProviderConfig provider(ProviderType type, String base, String key, Map<String, String> headers) {
        return new ProviderConfig("p", type, URI.create(base), key, headers, List.of(), 1000, null, null, false);
    }

    @Test
    void openai_pathsHostAndBearerCredential() {
        UpstreamTarget t = new UpstreamTarget(provider(ProviderType.OPENAI, "http://127.0.0.1:9090/v1/", "sk-up",
                Map.of("X-Extra", "yes")));
        assertThat(t.origin).isEqualTo("http://127.0.0.1:9090");
        assertThat(t.host.toString()).isEqualTo("127.0.0.1:9090");
        assertThat(t.path(Endpoint.CHAT_COMPLETIONS)).isEqualTo("/v1/chat/completions");
        assertThat(t.path(Endpoint.EMBEDDINGS)).isEqualTo("/v1/embeddings");
        assertThat(t.credentialName.toString()).isEqualTo("authorization");
        assertThat(t.credentialValue.toString()).isEqualTo("Bearer sk-up");
        assertThat(t.extraNames).extracting(Object::toString).containsExactly("x-extra");
        assertThat(t.extraValues).extracting(Object::toString).containsExactly("yes");
    }

    @Test
    void anthropic_defaultPortLeftOutOfHost_xApiKey_noKeyNoCredential() {
        UpstreamTarget t = new UpstreamTarget(provider(ProviderType.ANTHROPIC, "https://api.example.test", "sk-a", Map.of()));
        assertThat(t.host.toString()).isEqualTo("api.example.test");
        assertThat(t.path(Endpoint.MESSAGES)).isEqualTo("/v1/messages");
        assertThat(t.credentialName.toString()).isEqualTo("x-api-key");

        UpstreamTarget none = new UpstreamTarget(provider(ProviderType.OPENAI, "http://h/v1", null, Map.of()));
        assertThat((Object) none.credentialName).isNull();
        assertThat((Object) none.credentialValue).isNull();
    }

    @Test
    void aConfigValueThatWouldSplitTheRequest_isRefusedWhenTheTargetIsBuilt() {
        // The per-request headers skip Netty's validation, so a line break must be caught here, once.
        assertThatThrownBy(() -> new UpstreamTarget(provider(ProviderType.OPENAI, "http://h/v1", null,
                Map.of("x-extra", "a\r\nx-injected: 1")))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new UpstreamTarget(provider(ProviderType.OPENAI, "http://h/v1", "sk\r\nx: y",
                Map.of()))).isInstanceOf(IllegalArgumentException.class);
    }
}
