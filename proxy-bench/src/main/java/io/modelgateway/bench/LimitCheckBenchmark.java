package io.modelgateway.bench;

import io.modelgateway.core.config.DeploymentConfig;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.config.LimitsConfig;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.config.ModelType;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.config.ProviderType;
import io.modelgateway.core.exchange.Admission;
import io.modelgateway.core.limit.RateLimiter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the limit check adds to every request: {@code admit} + {@code settle} for a key with a requests and a
 * tokens per-minute limit, on one thread and with two threads (two event loops) on the same key, so both
 * buckets' compare-and-set contend; and the unlimited fast path as the baseline. The limits are set so high
 * that nothing is refused: the numbers are the cost of admitting, not of refusing.
 */
@State(Scope.Benchmark) // one limiter and one key for all threads: the contention is the point
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class LimitCheckBenchmark {
    private static final long HUGE = 1_000_000_000_000L;
    private static final long ESTIMATE = 500;
    private static final long ACTUAL = 420;

    private RateLimiter limiter;
    private KeyConfig limitedKey;
    private KeyConfig unlimitedKey;
    private ModelConfig model;

    @Setup(Level.Trial)
    public void setUp() {
        limiter = new RateLimiter();
        ProviderConfig sim = new ProviderConfig("sim", ProviderType.SIMULATOR, null, null, Map.of(), List.of(),
                1000, null, "max_tokens", false);
        model = new ModelConfig("sim-chat", ModelType.CHAT, List.of(new DeploymentConfig(sim, "sim-chat", 1)), 0,
                false, false, false, LimitsConfig.NONE);
        limitedKey = new KeyConfig("bench-limited", KeyConfig.sha256("sk-limited"), List.of("*"), false,
                new LimitsConfig(HUGE, HUGE, 0, 0), Map.of(), true);
        unlimitedKey = new KeyConfig("bench-unlimited", KeyConfig.sha256("sk-unlimited"), List.of("*"), false,
                LimitsConfig.NONE, Map.of(), true);
    }

    /** A refused admission would make the limited numbers the cost of a 429: fail the run instead. */
    @TearDown(Level.Trial)
    public void checkNothingWasRefused() {
        Admission a = limiter.admit(limitedKey, model, ESTIMATE);
        if (!a.admitted()) {
            throw new IllegalStateException("the benchmark's limits were reached: " + a.refusedLimit());
        }
        a.settle(ACTUAL);
    }

    @Benchmark
    @Threads(1)
    public boolean unlimited() {
        Admission a = limiter.admit(unlimitedKey, model, ESTIMATE);
        a.settle(ACTUAL);
        return a.admitted();
    }

    @Benchmark
    @Threads(1)
    public boolean limited() {
        Admission a = limiter.admit(limitedKey, model, ESTIMATE);
        a.settle(ACTUAL);
        return a.admitted();
    }

    @Benchmark
    @Threads(2)
    public boolean limitedTwoThreadsSameKey() {
        Admission a = limiter.admit(limitedKey, model, ESTIMATE);
        a.settle(ACTUAL);
        return a.admitted();
    }
}
