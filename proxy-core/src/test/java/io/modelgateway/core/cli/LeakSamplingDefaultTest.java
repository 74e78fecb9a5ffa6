package io.modelgateway.core.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.util.ResourceLeakDetector;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The gateway's default for Netty's leak sampling applies only to a JVM started without any leak detection setting
 * of its own. (The test JVM runs at PARANOID: the properties are cleared around each case and put back after it;
 * Netty read its own long before, so this changes nothing for the leak checks of the run.)
 */
class LeakSamplingDefaultTest {
    private static final String[] PROPERTIES = {
        "io.netty.leakDetection.level", "io.netty.leakDetectionLevel", "io.netty.leakDetection.samplingInterval",
    };
    private final Map<String, String> saved = new HashMap<>();

    @BeforeEach
    void clear() {
        ResourceLeakDetector.getLevel(); // Netty reads its settings now, as given to the test JVM, before they go
        for (String p : PROPERTIES) {
            saved.put(p, System.getProperty(p));
            System.clearProperty(p);
        }
    }

    @AfterEach
    void restore() {
        for (String p : PROPERTIES) {
            if (saved.get(p) == null) {
                System.clearProperty(p);
            } else {
                System.setProperty(p, saved.get(p));
            }
        }
    }

    @Test
    void nothingSet_samplesOneBufferInTheGatewaysInterval() {
        Main.leakSamplingDefault();
        assertThat(System.getProperty("io.netty.leakDetection.samplingInterval"))
                .isEqualTo(Integer.toString(Main.LEAK_SAMPLING_INTERVAL));
    }

    @Test
    void aLevelOrAnIntervalGiven_isLeftAsGiven() {
        System.setProperty("io.netty.leakDetection.level", "advanced");
        Main.leakSamplingDefault();
        assertThat(System.getProperty("io.netty.leakDetection.samplingInterval")).isNull();

        System.clearProperty("io.netty.leakDetection.level");
        System.setProperty("io.netty.leakDetectionLevel", "simple");
        Main.leakSamplingDefault();
        assertThat(System.getProperty("io.netty.leakDetection.samplingInterval")).isNull();

        System.clearProperty("io.netty.leakDetectionLevel");
        System.setProperty("io.netty.leakDetection.samplingInterval", "64");
        Main.leakSamplingDefault();
        assertThat(System.getProperty("io.netty.leakDetection.samplingInterval")).isEqualTo("64");
    }
}
