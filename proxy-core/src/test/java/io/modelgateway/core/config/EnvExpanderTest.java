package io.modelgateway.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class EnvExpanderTest {

    private static final Map<String, String> ENV = Map.of("HOST", "example.com", "PORT", "8443", "EMPTY", "");

    @Test
    void expand_severalReferencesWithTextAround_allReplaced() throws Exception {
        assertThat(EnvExpander.expand("https://${HOST}:${PORT}/v1", ENV)).isEqualTo("https://example.com:8443/v1");
    }

    @Test
    void expand_default_usedWhenUnsetOrEmpty() throws Exception {
        assertThat(EnvExpander.expand("${NOPE:-fallback}", ENV)).isEqualTo("fallback");
        assertThat(EnvExpander.expand("${EMPTY:-fallback}", ENV)).isEqualTo("fallback");
        assertThat(EnvExpander.expand("${HOST:-fallback}", ENV)).isEqualTo("example.com");
        assertThat(EnvExpander.expand("${NOPE:-}", ENV)).isEmpty();
    }

    @Test
    void expand_unsetOrEmptyWithoutDefault_throwsNamingTheVariable() {
        assertThatThrownBy(() -> EnvExpander.expand("a ${NOPE} b", ENV))
                .isInstanceOfSatisfying(EnvExpander.UnsetVariableException.class,
                        e -> assertThat(e.describe()).isEqualTo("environment variable NOPE is not set"));
        assertThatThrownBy(() -> EnvExpander.expand("${EMPTY}", ENV))
                .isInstanceOfSatisfying(EnvExpander.UnsetVariableException.class,
                        e -> assertThat(e.describe()).isEqualTo("environment variable EMPTY is empty"));
    }

    @Test
    void expand_escapedOrPlainDollar_keptLiterally() throws Exception {
        assertThat(EnvExpander.expand("$${HOST} costs $5", ENV)).isEqualTo("${HOST} costs $5");
        assertThat(EnvExpander.hasReference("$${HOST}")).isFalse();
        assertThat(EnvExpander.hasReference("x${HOST}")).isTrue();
    }

    @Test
    void expand_valueContainingReference_isNotExpandedAgain() throws Exception {
        assertThat(EnvExpander.expand("${V}", Map.of("V", "${HOST}"))).isEqualTo("${HOST}");
    }

    @Test
    void expand_brokenSyntax_throwsIllegalArgument() {
        assertThatThrownBy(() -> EnvExpander.expand("${HOST", ENV)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("closing");
        assertThatThrownBy(() -> EnvExpander.expand("${}", ENV)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EnvExpander.expand("${1X}", ENV)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EnvExpander.expand("${A:-${B}}", ENV)).hasMessageContaining("nested");
    }
}
