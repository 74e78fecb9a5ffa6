package io.modelgateway.core.cli;

import io.modelgateway.core.config.KeyConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * {@code gateway hash-key [--key-env VAR]}: prints {@code sha256:<64 lowercase hex>} of a gateway key, the
 * form the config's {@code key:} field takes, so the key itself need not be stored wherever the config goes
 * (a repository, a ConfigMap). The hash is what {@link KeyConfig#sha256} computes, so it matches exactly
 * what the gateway compares a presented key against.
 *
 * <p>The key comes from stdin (one line; the line end is not part of it) or from an environment variable,
 * never from the command line, where {@code ps} and shell history would show it. It is never printed,
 * logged, or repeated in an error message. Keys the gateway could never match are refused, with the same
 * rules as the config loader applies to a key from the environment.
 */
final class HashKeyCommand {

    static final String USAGE = "usage: gateway hash-key [--key-env VAR]\n"
            + "  prints sha256:<hex> of a gateway key, for the key: field of the config.\n"
            + "  The key is read from stdin (one line), or from the environment variable VAR.\n"
            + "  e.g.  printf %s \"$KEY\" | gateway hash-key      gateway hash-key --key-env GATEWAY_KEY";

    /** Far beyond any real key; stops a mistaken pipe (a whole file, /dev/zero) from filling the heap. */
    static final int MAX_KEY_BYTES = 64 * 1024;

    private static final Pattern OPTION = Pattern.compile("--?[A-Za-z][A-Za-z-]*");

    private HashKeyCommand() {
    }

    /** {@code sha256:} and the lowercase hex SHA-256 of the key's UTF-8 bytes. */
    static String hash(String key) {
        return "sha256:" + HexFormat.of().formatHex(KeyConfig.sha256(key));
    }

    /**
     * Runs the command.
     *
     * @param args the arguments after {@code hash-key}
     * @return the exit status: 0 when the hash was printed, 2 for a usage error or an unusable key
     */
    static int run(String[] args, InputStream in, PrintStream out, PrintStream err, Map<String, String> env) {
        String keyEnv = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--key-env" -> {
                    if (i + 1 >= args.length) {
                        return fail(err, "--key-env needs the name of an environment variable (try --help)");
                    }
                    keyEnv = args[++i];
                }
                case "-h", "--help" -> {
                    out.println(USAGE);
                    return 0;
                }
                // Deliberately no --key: a key on the command line ends up in ps output and shell history.
                default -> {
                    // Echo only what looks like an option: the stray argument may well be the key itself.
                    return fail(err, (OPTION.matcher(args[i]).matches() ? "unknown argument: " + args[i]
                            : "unexpected argument; the key is read from stdin or --key-env, not from the"
                            + " command line") + " (try --help)");
                }
            }
        }
        String key;
        if (keyEnv != null) {
            key = env.get(keyEnv);
            if (key == null) {
                return fail(err, "environment variable " + keyEnv + " is not set");
            }
        } else {
            try {
                key = readLine(in);
            } catch (CharacterCodingException e) {
                return fail(err, "the key on stdin is not UTF-8 text");
            } catch (IOException e) {
                return fail(err, e.getMessage());
            }
        }
        String problem = problem(key);
        if (problem != null) {
            return fail(err, problem);
        }
        out.println(hash(key));
        out.flush();
        return 0;
    }

    /** Why the gateway could never match {@code key}, or null when it could. Never quotes the key. */
    static String problem(String key) {
        if (key.isEmpty()) {
            return "the key is empty";
        }
        if (key.indexOf('\n') >= 0 || key.indexOf('\r') >= 0) {
            return "the key must be a single line";
        }
        // HTTP trims the whitespace around a header value, so such a key could never be presented intact.
        if (!key.equals(key.strip())) {
            return "the key has leading or trailing whitespace";
        }
        return null;
    }

    /** The first line of {@code in}, without its {@code \n} or {@code \r\n}; reads nothing beyond it. */
    static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int b;
        // Byte by byte, so an interactive user's Enter ends the read without waiting for end of input.
        while ((b = in.read()) >= 0 && b != '\n') {
            if (line.size() >= MAX_KEY_BYTES) {
                throw new IOException("the key on stdin is longer than " + MAX_KEY_BYTES + " bytes");
            }
            line.write(b);
        }
        byte[] bytes = line.toByteArray();
        int length = bytes.length;
        if (b == '\n' && length > 0 && bytes[length - 1] == '\r') {
            length--;
        }
        return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes, 0, length)).toString();
    }

    private static int fail(PrintStream err, String message) {
        err.println("gateway hash-key: " + message);
        return 2;
    }
}
