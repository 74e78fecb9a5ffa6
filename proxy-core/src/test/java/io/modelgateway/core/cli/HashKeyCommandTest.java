package io.modelgateway.core.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.config.ConfigLoader;
import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.config.KeyConfig;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code gateway hash-key}: what it prints is what {@code printf %s KEY | sha256sum} prints, and what the config takes. */
class HashKeyCommandTest {

    private static final String KEY = "sk-gw-hash-me-0123456789";

    /** The same digest as {@code printf %s KEY | sha256sum}, computed independently of the gateway's code. */
    private static String sha256sum(String key) throws Exception {
        byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        return HexFormat.of().formatHex(digest);
    }

    private record Run(int status, String out, String err) {
    }

    private static Run run(String stdin, Map<String, String> env, String... args) {
        return run(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)), env, args);
    }

    private static Run run(InputStream stdin, Map<String, String> env, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = HashKeyCommand.run(args, stdin, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), env);
        return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void hash_knownKeys_matchSha256sum() throws Exception {
        for (String key : new String[] {KEY, "abc", "ключ-🔑", "x".repeat(1000)}) {
            assertThat(HashKeyCommand.hash(key)).isEqualTo("sha256:" + sha256sum(key))
                    .matches("sha256:[0-9a-f]{64}");
        }
        // The digest of "abc" from FIPS 180-2, so the test does not only agree with itself.
        assertThat(HashKeyCommand.hash("abc"))
                .isEqualTo("sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    @Test
    void run_keyOnStdin_printsOnlyTheHash() throws Exception {
        Run r = run(KEY + "\n", Map.of());
        assertThat(r.status()).isZero();
        assertThat(r.out()).isEqualTo("sha256:" + sha256sum(KEY) + System.lineSeparator());
        assertThat(r.err()).isEmpty();
    }

    @Test
    void run_stdinWithoutNewlineOrWithCrlf_sameHash() throws Exception {
        String expected = "sha256:" + sha256sum(KEY) + System.lineSeparator();
        assertThat(run(KEY, Map.of()).out()).isEqualTo(expected);
        assertThat(run(KEY + "\r\n", Map.of()).out()).isEqualTo(expected);
        // Only the first line is the key; nothing after it is read.
        assertThat(run(KEY + "\nsecond line\n", Map.of()).out()).isEqualTo(expected);
    }

    @Test
    void run_keyFromEnvironment_printsOnlyTheHash() throws Exception {
        Run r = run("", Map.of("MY_KEY", KEY), "--key-env", "MY_KEY");
        assertThat(r.status()).isZero();
        assertThat(r.out()).isEqualTo("sha256:" + sha256sum(KEY) + System.lineSeparator());
        assertThat(r.err()).isEmpty();
    }

    @Test
    void run_printedHash_isAcceptedByTheConfigAndMatchesTheKey() throws Exception {
        String printed = run(KEY + "\n", Map.of()).out().strip();
        GatewayConfig config = ConfigLoader.parse("""
                keys: [{name: hashed, key: '%s', models: ['*']}]
                providers: {sim: {type: simulator}}
                models: {m: {deployments: [{provider: sim}]}}
                """.formatted(printed), "test.yaml", Map.of(), null);
        assertThat(config.findKey(KeyConfig.sha256(KEY))).isNotNull();
    }

    @Test
    void run_emptyKey_exit2WithMessageOnStderr() {
        for (Run r : new Run[] {run("", Map.of()), run("\n", Map.of()), run("", Map.of("E", ""), "--key-env", "E")}) {
            assertThat(r.status()).isEqualTo(2);
            assertThat(r.out()).isEmpty();
            assertThat(r.err()).isEqualTo("gateway hash-key: the key is empty" + System.lineSeparator());
        }
    }

    @Test
    void run_unusableKeys_exit2WithoutRepeatingTheKey() {
        Run spaces = run(" " + KEY + " \n", Map.of());
        assertThat(spaces.status()).isEqualTo(2);
        assertThat(spaces.err()).contains("the key has leading or trailing whitespace").doesNotContain(KEY);
        assertThat(spaces.out()).isEmpty();

        Run twoLines = run("", Map.of("K", KEY + "\nmore"), "--key-env", "K");
        assertThat(twoLines.status()).isEqualTo(2);
        assertThat(twoLines.err()).contains("the key must be a single line").doesNotContain(KEY);

        Run notUtf8 = run(new ByteArrayInputStream(new byte[] {'s', 'k', (byte) 0xff, '\n'}), Map.of());
        assertThat(notUtf8.status()).isEqualTo(2);
        assertThat(notUtf8.err()).contains("not UTF-8");

        Run huge = run("k".repeat(HashKeyCommand.MAX_KEY_BYTES + 1), Map.of());
        assertThat(huge.status()).isEqualTo(2);
        assertThat(huge.err()).contains("longer than").doesNotContain("kkkk");
    }

    @Test
    void run_usageErrors_exit2() {
        Run unset = run("", Map.of(), "--key-env", "NOT_SET");
        assertThat(unset.status()).isEqualTo(2);
        assertThat(unset.err()).isEqualTo("gateway hash-key: environment variable NOT_SET is not set"
                + System.lineSeparator());

        assertThat(run("", Map.of(), "--key-env").status()).isEqualTo(2);
        Run literal = run("", Map.of(), "--key", KEY);
        assertThat(literal.status()).isEqualTo(2);
        assertThat(literal.err()).startsWith("gateway hash-key: unknown argument: --key ");
        for (String[] args : new String[][] {{KEY}, {"--key=" + KEY}, {"--key-env", "K", KEY}}) {
            Run keyAsArgument = run("", Map.of("K", "sk-other"), args);
            assertThat(keyAsArgument.status()).isEqualTo(2);
            assertThat(keyAsArgument.err()).startsWith("gateway hash-key: unexpected argument; the key is read from"
                    + " stdin or --key-env").doesNotContain(KEY);
            assertThat(keyAsArgument.out()).isEmpty();
        }
    }

    @Test
    void run_help_printsUsageExit0() {
        Run r = run("", Map.of(), "--help");
        assertThat(r.status()).isZero();
        assertThat(r.out()).startsWith("usage: gateway hash-key [--key-env VAR]");
        assertThat(Main.USAGE).contains("gateway hash-key [--key-env VAR]");
    }
}
