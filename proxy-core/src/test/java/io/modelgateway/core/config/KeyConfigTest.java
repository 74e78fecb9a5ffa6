package io.modelgateway.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

class KeyConfigTest {

    @Test
    void sha256_knownInput_givesTheStandardDigest() {
        assertThat(HexFormat.of().formatHex(KeyConfig.sha256("abc")))
                .isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    @Test
    void matches_sameHash_trueOtherwiseFalse() {
        KeyConfig key = new KeyConfig("k", KeyConfig.sha256("sk-one"), List.of("*"), false);
        assertThat(key.matches(KeyConfig.sha256("sk-one"))).isTrue();
        assertThat(key.matches(KeyConfig.sha256("sk-two"))).isFalse();
        assertThat(key.matches(new byte[5])).isFalse();
        assertThat(key.matches(null)).isFalse();
    }

    @Test
    void constructor_hashIsCopied_laterChangesDoNotAffectTheKey() {
        byte[] hash = KeyConfig.sha256("sk-one");
        KeyConfig key = new KeyConfig("k", hash, List.of("*"), false);
        hash[0] ^= 1;
        assertThat(key.matches(KeyConfig.sha256("sk-one"))).isTrue();
    }

    @Test
    void constructor_wrongHashLength_refused() {
        assertThatThrownBy(() -> new KeyConfig("k", new byte[31], List.of("*"), false))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void allowsModel_exactNamesAndGlobs_matchOnlyThose() {
        KeyConfig key = new KeyConfig("k", KeyConfig.sha256("x"), List.of("sim-chat", "gpt-4?-*", "claude-*"), false);
        assertThat(key.allowsModel("sim-chat")).isTrue();
        assertThat(key.allowsModel("gpt-4o-mini")).isTrue();
        assertThat(key.allowsModel("claude-sonnet-4-5")).isTrue();
        assertThat(key.allowsModel("sim-embed")).isFalse();
        assertThat(key.allowsModel("gpt-4-turbo")).isFalse();
    }

    @Test
    void allowsModel_star_allowsEverything() {
        KeyConfig key = new KeyConfig("k", KeyConfig.sha256("x"), List.of("*"), false);
        assertThat(key.allowsModel("anything-at-all")).isTrue();
    }

    @Test
    void toString_showsNameButNoHash() {
        byte[] hash = KeyConfig.sha256("sk-secret-value");
        KeyConfig key = new KeyConfig("team-a", hash, List.of("*"), false);
        assertThat(key.toString()).contains("team-a")
                .doesNotContain(HexFormat.of().formatHex(hash))
                .doesNotContain("sk-secret-value");
    }
}
