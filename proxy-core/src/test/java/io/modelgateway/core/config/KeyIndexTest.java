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
    void find_digestsSharingTheirFirstBytes_asAScanFindsThem() {
        // Digests made up so that many share the four bytes the table is keyed by: the probe must walk past them.
        java.util.Random rnd = new java.util.Random(3);
        List<KeyConfig> keys = new ArrayList<>();
        List<byte[]> asked = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            byte[] d = new byte[32];
            rnd.nextBytes(d);
            if (i % 3 != 0) {
                d[0] = 7;
                d[1] = 7;
                d[2] = (byte) (i % 5);
                d[3] = 7;
            }
            keys.add(new KeyConfig("k" + i, d, List.of("*"), false));
            asked.add(d.clone());
            byte[] other = d.clone();
            other[31] ^= 1; // same first bytes, another digest
            asked.add(other);
        }
        KeyIndex index = new KeyIndex(keys);
        for (byte[] d : asked) {
            KeyConfig scanned = keys.stream().filter(k -> k.matches(d)).findFirst().orElse(null);
            assertThat(index.find(d)).isSameAs(scanned);
        }
    }

    @Test
    void find_twoKeysWithTheSameHash_theFirstWins_asTheScanDid() {
        byte[] hash = KeyConfig.sha256("sk-same");
        KeyIndex index = new KeyIndex(List.of(new KeyConfig("first", hash, List.of("*"), false),
                new KeyConfig("second", hash, List.of("*"), false)));
        assertThat(index.find(KeyConfig.sha256("sk-same")).name()).isEqualTo("first");
    }
}
