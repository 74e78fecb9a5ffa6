package io.modelgateway.core.limit;

import io.modelgateway.core.config.DeploymentConfig;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.config.LimitsConfig;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.config.ModelType;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.config.ProviderType;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** Config objects and a hand-driven clock for the limiter's tests. */
final class LimitFixtures {
    private static final ProviderConfig SIM = new ProviderConfig("sim", ProviderType.SIMULATOR, null, null, Map.of(),
            List.of(), 1000, null, "max_tokens", false);

    /**
     * Both clocks of the limiter, moved together by hand. The monotonic one starts below zero on purpose:
     * {@code System.nanoTime} may be negative, and nothing may assume otherwise.
     */
    static final class FakeClock {
        final AtomicLong nanos = new AtomicLong(-7_000_000_000_000L);
        final AtomicLong millis;

        FakeClock(String utc) {
            millis = new AtomicLong(Instant.parse(utc).toEpochMilli());
        }

        void advanceMillis(long ms) {
            nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
            millis.addAndGet(ms);
        }

        RateLimiter limiter() {
            return new RateLimiter(nanos::get, millis::get);
        }
    }

    private LimitFixtures() {
    }

    static LimitsConfig rpm(long n) {
        return new LimitsConfig(n, 0, 0, 0);
    }

    static LimitsConfig tpm(long n) {
        return new LimitsConfig(0, n, 0, 0);
    }

    static LimitsConfig concurrent(int n) {
        return new LimitsConfig(0, 0, n, 0);
    }

    static LimitsConfig daily(long n) {
        return new LimitsConfig(0, 0, 0, n);
    }

    static KeyConfig key(String name, LimitsConfig limits) {
        return key(name, limits, Map.of(), true);
    }

    static KeyConfig key(String name, LimitsConfig limits, Map<String, LimitsConfig> perModel, boolean headers) {
        return new KeyConfig(name, KeyConfig.sha256("sk-" + name), List.of("*"), false, limits, perModel, headers);
    }

    static ModelConfig model(String name) {
        return model(name, LimitsConfig.NONE);
    }

    static ModelConfig model(String name, LimitsConfig limits) {
        return new ModelConfig(name, ModelType.CHAT, List.of(new DeploymentConfig(SIM, name, 1)), 0, false, false,
                false, limits);
    }
}
