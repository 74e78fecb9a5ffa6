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
 * with SHA-256 and {@link GatewayConfig#findKey} compares that hash, in constant time, with every configured
 * key's hash, so neither the time taken nor memory says anything about the keys. The baseline is a naive
 * gateway that keeps the plain keys in a {@code HashMap<String, KeyConfig>}: faster, but it holds every secret
 * in memory and its {@code String.equals} returns at the first differing byte.
 *
 * <p>A candidate improvement is measured beside them, not yet in proxy-core: a {@code HashMap} keyed by the
 * digest (wrapped for {@code hashCode}/{@code equals}, the equality being {@link MessageDigest#isEqual}), then
 * the found key's own constant-time {@link KeyConfig#matches}. O(1) in the number of keys and still holds
 * hashes only. Its timing depends on which bucket the presented key's digest falls in, which says something
 * about SHA-256 outputs, nothing about a key: steering it would take SHA-256 preimages. And
 * {@link #sha256Only} shows how much of every variant is the digest itself.
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
    private Map<Digest, KeyConfig> byDigest;
    /** The Authorization header value's bytes, made into a new String per request. */
    private byte[] header;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        sha256 = MessageDigest.getInstance("SHA-256");
        SplittableRandom random = new SplittableRandom(7);
        List<KeyConfig> list = new ArrayList<>(keys);
        plain = new HashMap<>();
        byDigest = new HashMap<>();
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
            byDigest.put(new Digest(hash), k);
        }
        config = new GatewayConfig(new HostAndPort("127.0.0.1", 8080), 1 << 20, list, Map.of(), Map.of());
        header = last.getBytes(StandardCharsets.ISO_8859_1);
        KeyConfig want = list.get(keys - 1);
        if (sha256ThenScan() != want || plainHashMapBaseline() != want || sha256ThenDigestMap() != want) {
            throw new IllegalStateException("the lookups disagree");
        }
    }

    private String presented() {
        return new String(header, StandardCharsets.ISO_8859_1);
    }

    /** The gateway today: SHA-256, then a constant-time compare against every configured hash. */
    @Benchmark
    public KeyConfig sha256ThenScan() {
        byte[] hash = sha256.digest(presented().getBytes(StandardCharsets.UTF_8));
        return config.findKey(hash);
    }

    /** Baseline: plain keys in a HashMap (what the safe design refuses to do). */
    @Benchmark
    public KeyConfig plainHashMapBaseline() {
        return plain.get(presented());
    }

    /** Candidate: SHA-256, a HashMap keyed by the digest, then the found key's constant-time compare. */
    @Benchmark
    public KeyConfig sha256ThenDigestMap() {
        byte[] hash = sha256.digest(presented().getBytes(StandardCharsets.UTF_8));
        KeyConfig k = byDigest.get(new Digest(hash));
        return k != null && k.matches(hash) ? k : null;
    }

    /** Reference: the digest alone, the floor of any design that stores hashes. */
    @Benchmark
    public byte[] sha256Only() {
        return sha256.digest(presented().getBytes(StandardCharsets.UTF_8));
    }

    /**
     * A SHA-256 digest as a map key. Its first four bytes are already uniformly distributed, so they are the
     * hash code; equality is constant-time like every other compare of key hashes.
     */
    static final class Digest {
        private final byte[] bytes;
        private final int hash;

        Digest(byte[] bytes) {
            this.bytes = bytes;
            this.hash = (bytes[0] & 0xff) << 24 | (bytes[1] & 0xff) << 16 | (bytes[2] & 0xff) << 8 | (bytes[3] & 0xff);
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Digest d && MessageDigest.isEqual(bytes, d.bytes);
        }
    }
}
