package io.modelgateway.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class GlobTest {

    @Test
    void matches_star_matchesAnyRunIncludingNone() {
        assertThat(Glob.matches("*", "")).isTrue();
        assertThat(Glob.matches("*", "gpt-4o")).isTrue();
        assertThat(Glob.matches("gpt-*", "gpt-")).isTrue();
        assertThat(Glob.matches("gpt-*", "gpt-4o-mini")).isTrue();
        assertThat(Glob.matches("gpt-*", "claude-3")).isFalse();
        assertThat(Glob.matches("*-mini", "gpt-4o-mini")).isTrue();
        assertThat(Glob.matches("a*b*c", "a-b-b-c")).isTrue();
        assertThat(Glob.matches("a*b*c", "a-b-b-d")).isFalse();
    }

    @Test
    void matches_questionMark_matchesExactlyOneCharacter() {
        assertThat(Glob.matches("gpt-4?", "gpt-4o")).isTrue();
        assertThat(Glob.matches("gpt-4?", "gpt-4")).isFalse();
        assertThat(Glob.matches("gpt-4?", "gpt-4oo")).isFalse();
    }

    @Test
    void matches_noWildcard_isExactAndCaseSensitive() {
        assertThat(Glob.matches("sim-chat", "sim-chat")).isTrue();
        assertThat(Glob.matches("sim-chat", "Sim-chat")).isFalse();
        assertThat(Glob.matches("sim-chat", "sim-chat2")).isFalse();
    }

    @Test
    void matches_manyStarsAgainstLongMiss_finishesQuickly() {
        String text = "a".repeat(10_000);
        assertThat(Glob.matches("*a*a*a*a*a*a*a*b", text)).isFalse();
    }
}
