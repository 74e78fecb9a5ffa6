package io.modelgateway.bench;

import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.config.HostAndPort;
import io.modelgateway.core.config.KeyConfig;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the safe key design costs per request. The gateway ({@code KeyAuthenticator}) hashes the presented key
 * with SHA-256 and {@link GatewayConfig#findKey} looks that digest up in a map by digest, then compares it in
 * constant time ({@code KeyIndex}): O(1) in the number of keys, hashes only in memory. (It used to compare
 * against every configured hash: 59 µs a request with 1000 keys, which this benchmark found.) The baseline is
 * a naive gateway that keeps the plain keys in a {@code HashMap<String, KeyConfig>}: faster, but it holds every
 * secret in memory and its {@code String.equals} returns at the first differing byte. {@link #sha256Only}
 * shows how much of the cost is the digest itself.
 *
 * <p>Keys look like real ones ({@code sk-mg-} and 48 random characters); the presented one is the last
 * configured (the scan compares them all whichever it is). Each invocation starts from a new String, as the
 * HTTP decoder hands on a new header value per request, so the baseline's {@code String.hashCode} is not cached.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class KeyLookupBenchmark {
    private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

    @Param({"1", "10", "1000"})
    public int keys;

    /** Per thread, as KeyAuthenticator's FastThreadLocal gives each event loop its own. */
    private MessageDigest sha256;
    private GatewayConfig config;
    private Map<String, KeyConfig> plain;
    /** The Authorization header value's bytes, made into a new String per request. */
    private byte[] header;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        sha256 = MessageDigest.getInstance("SHA-256");
        SplittableRandom random = new SplittableRandom(7);
        List<KeyConfig> list = new ArrayList<>(keys);
        plain = new HashMap<>();
        String last = null;
        for (int i = 0; i < keys; i++) {
            StringBuilder key = new StringBuilder("sk-mg-");
            for (int c = 0; c < 48; c++) {
                key.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
            }
            last = key.toString();
            byte[] hash = KeyConfig.sha256(last);
            KeyConfig k = new KeyConfig("key-" + i, hash, List.of("*"), false);
            list.add(k);
            plain.put(last, k);
        }
        config = new GatewayConfig(new HostAndPort("127.0.0.1", 8080), 1 << 20, list, Map.of(), Map.of());
        header = last.getBytes(StandardCharsets.ISO_8859_1);
        KeyConfig want = list.get(keys - 1);
        if (sha256ThenFindKey() != want || plainHashMapBaseline() != want) {
            throw new IllegalStateException("the lookups disagree");
        }
    }

    private String presented() {
        return new String(header, StandardCharsets.ISO_8859_1);
    }

    /** The gateway: SHA-256, then the digest map and a constant-time compare. */
    @Benchmark
    public KeyConfig sha256ThenFindKey() {
        byte[] hash = sha256.digest(presented().getBytes(StandardCharsets.UTF_8));
        return config.findKey(hash);
    }

    /** Baseline: plain keys in a HashMap (what the safe design refuses to do). */
    @Benchmark
    public KeyConfig plainHashMapBaseline() {
        return plain.get(presented());
    }

    /** Reference: the digest alone, the floor of any design that stores hashes. */
    @Benchmark
    public byte[] sha256Only() {
        return sha256.digest(presented().getBytes(StandardCharsets.UTF_8));
    }
}
