package io.modelgateway.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class KeyIndexTest {

    @Test
    void find_amongAThousandKeys_eachFound_unknownAndMalformedNot() {
        List<KeyConfig> keys = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            keys.add(new KeyConfig("k" + i, KeyConfig.sha256("sk-" + i), List.of("*"), false));
        }
        KeyIndex index = new KeyIndex(keys);
        for (int i = 0; i < 1000; i += 37) {
            assertThat(index.find(KeyConfig.sha256("sk-" + i)).name()).isEqualTo("k" + i);
        }
        assertThat(index.find(KeyConfig.sha256("sk-1000"))).isNull();
        assertThat(index.find(new byte[31])).isNull();
        assertThat(index.find(null)).isNull();
        assertThat(index).hasSize(1000).first().extracting(KeyConfig::name).isEqualTo("k0");
    }

    @Test
    void find_twoKeysWithTheSameHash_theFirstWins_asTheScanDid() {
        byte[] hash = KeyConfig.sha256("sk-same");
        KeyIndex index = new KeyIndex(List.of(new KeyConfig("first", hash, List.of("*"), false),
                new KeyConfig("second", hash, List.of("*"), false)));
        assertThat(index.find(KeyConfig.sha256("sk-same")).name()).isEqualTo("first");
    }
}
