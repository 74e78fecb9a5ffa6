package io.modelgateway.codecs.error;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.ByteBufOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Removes credentials from what an upstream sends back in its error answers: a provider key must never reach a
 * caller, also not one an upstream echoed back. Two kinds of secret are removed:
 * <ul>
 *   <li>the values the gateway itself sends to that upstream (its {@code api_key}, secret-looking extra headers),
 *       given at construction, wherever they appear; values shorter than {@link #MIN_SECRET_CHARS} are not searched
 *       for (a placeholder key such as {@code EMPTY} would otherwise mangle every message);</li>
 *   <li>anything shaped like a common credential: {@code sk-…} (also {@code sk-ant-…}, {@code sk-proj-…}),
 *       {@code pk-…}, {@code rk-…}, Google {@code AIza…}, AWS access key ids {@code AKIA…} / {@code ASIA…},
 *       {@code Bearer <token>}, and {@code api_key: …}-like name/value pairs.</li>
 * </ul>
 * Each is replaced by {@link #MASK}.
 *
 * <p>Only error answers go through here, never a 2xx (the hot path). {@link #redactBody} reads a JSON body token by
 * token and redacts every string and name after JSON unescaping, so a key written with escapes
 * ({@code "\u0073k-…"}) is found too; anything else is treated as text byte for byte. Immutable and thread-safe.
 */
public final class SecretRedactor {
    /** What a removed secret is replaced by. */
    public static final String MASK = "[redacted]";
    /** Configured values shorter than this are not treated as secrets to search for. */
    public static final int MIN_SECRET_CHARS = 8;
    /** Only the credential shapes: for text that no configured value can be in. */
    public static final SecretRedactor PATTERNS_ONLY = new SecretRedactor(Set.of());

    /** Credentials that providers echo back (OpenAI: "Incorrect API key provided: sk-proj-****abcd"), and cloud keys. */
    private static final Pattern PREFIXED_KEY = Pattern.compile("\\b(?:sk|pk|rk)-[A-Za-z0-9_*.\\-]{6,}"
            + "|\\bAIza[0-9A-Za-z_\\-]{20,}|\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b");
    private static final Pattern BEARER = Pattern.compile("(?i)\\bbearer\\s+[A-Za-z0-9._~+/=*\\-]{8,}");
    private static final Pattern NAMED_SECRET = Pattern.compile(
            "(?i)\\b(x-api-key|api[_-]?key|access[_-]?token|secret|password)(\"?\\s*[:=]\\s*\"?)[^\\s\"',;}]{6,}");
    private static final JsonFactory JSON = new JsonFactory();

    /** Longest first, so a secret that contains another is masked whole. */
    private final String[] secrets;

    /**
     * @param secrets values to remove wherever they appear (null, blank and short ones are skipped)
     */
    public SecretRedactor(Collection<String> secrets) {
        Set<String> kept = new LinkedHashSet<>();
        for (String s : secrets) {
            if (s != null && s.strip().length() >= MIN_SECRET_CHARS) {
                kept.add(s);
            }
        }
        this.secrets = kept.stream().sorted(Comparator.comparingInt(String::length).reversed()).toArray(String[]::new);
    }

    /** Number of configured values searched for (tests). */
    public int secretCount() {
        return secrets.length;
    }

    /** {@code text} with every configured secret and every credential-shaped token replaced by {@link #MASK}. */
    public String redact(String text) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        String m = text;
        for (String s : secrets) {
            if (m.contains(s)) {
                m = m.replace(s, MASK);
            }
        }
        m = PREFIXED_KEY.matcher(m).replaceAll(MASK);
        m = BEARER.matcher(m).replaceAll("Bearer " + MASK);
        return NAMED_SECRET.matcher(m).replaceAll("$1$2" + MASK);
    }

    /**
     * The readable bytes of {@code body} with every secret removed, or null when there was none to remove (the caller
     * then sends the body as it is). {@code body} is borrowed: neither read nor released. The returned buffer is the
     * caller's. A JSON document (one value, nothing but whitespace after it) is rewritten token by token, which keeps
     * its meaning but may change its spacing; anything else is rewritten as text, every other byte kept.
     */
    public ByteBuf redactBody(ByteBufAllocator alloc, ByteBuf body) {
        if (body == null || !body.isReadable()) {
            return null;
        }
        if (startsLikeJson(body)) {
            ByteBuf out = alloc.buffer(body.readableBytes() + 64);
            boolean keep = false;
            try {
                Boolean changed = redactJson(body, out);
                if (changed != null) {
                    keep = changed;
                    return changed ? out : null;
                }
            } finally {
                if (!keep) {
                    out.release();
                }
            }
        }
        // Latin-1 maps every byte to one char and back, so bytes outside a match come out exactly as they went in.
        String text = body.toString(StandardCharsets.ISO_8859_1);
        String redacted = redact(text);
        if (redacted.equals(text)) {
            return null;
        }
        ByteBuf out = alloc.buffer(redacted.length());
        out.writeCharSequence(redacted, StandardCharsets.ISO_8859_1);
        return out;
    }

    /**
     * A server-sent event with every secret removed from its {@code data:} payloads (each redacted as a body: JSON
     * after unescaping, else as text) and from its other lines (as text); null when there was none. {@code event} is
     * borrowed; the returned buffer is the caller's. Meant for error events only, never every event.
     */
    public ByteBuf redactSseEvent(ByteBufAllocator alloc, ByteBuf event) {
        int start = event.readerIndex();
        int end = event.writerIndex();
        ByteBuf out = null;
        int copied = start; // bytes before this are in out already (when out exists)
        int line = start;
        try {
            while (line < end) {
                int eol = line;
                while (eol < end && event.getByte(eol) != '\n' && event.getByte(eol) != '\r') {
                    eol++;
                }
                int from = line;
                if (eol - line >= 5 && event.toString(line, 5, StandardCharsets.US_ASCII).equals("data:")) {
                    from = line + 5;
                    if (from < eol && event.getByte(from) == ' ') {
                        from++;
                    }
                }
                ByteBuf clean = redactBody(alloc, event.slice(from, eol - from));
                if (clean != null) {
                    if (out == null) {
                        out = alloc.buffer(event.readableBytes() + 16);
                    }
                    out.writeBytes(event, copied, from - copied);
                    out.writeBytes(clean);
                    clean.release();
                    copied = eol;
                }
                line = eol;
                while (line < end && (event.getByte(line) == '\n' || event.getByte(line) == '\r')) {
                    line++;
                }
            }
            if (out != null) {
                out.writeBytes(event, copied, end - copied);
            }
            ByteBuf result = out;
            out = null;
            return result;
        } finally {
            if (out != null) {
                out.release();
            }
        }
    }

    /** Whether {@code text} holds anything {@link #redact} would remove. */
    public boolean containsSecret(String text) {
        return text != null && !redact(text).equals(text);
    }

    /**
     * Copies the JSON document in {@code body} to {@code out}, redacting every string, name and number text; true
     * when anything was redacted, false when nothing was, null when {@code body} is not one well-formed JSON
     * document (the caller then falls back to text).
     */
    private Boolean redactJson(ByteBuf body, ByteBuf out) {
        boolean changed = false;
        try (JsonParser p = JSON.createParser((InputStream) new ByteBufInputStream(body.duplicate()));
                JsonGenerator g = JSON.createGenerator((OutputStream) new ByteBufOutputStream(out), JsonEncoding.UTF8)) {
            JsonToken t = p.nextToken();
            if (t == null) {
                return null;
            }
            int depth = 0;
            do {
                switch (t) {
                    case FIELD_NAME -> {
                        String name = p.currentName();
                        String r = redact(name);
                        changed |= !r.equals(name);
                        g.writeFieldName(r);
                    }
                    case VALUE_STRING -> {
                        String v = p.getText();
                        String r = redact(v);
                        changed |= !r.equals(v);
                        g.writeString(r);
                    }
                    case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> {
                        // A digits-only key would be a number here.
                        String v = p.getText();
                        String r = redact(v);
                        if (r.equals(v)) {
                            g.writeNumber(v); // the upstream's own text, exactly
                        } else {
                            changed = true;
                            g.writeString(r);
                        }
                    }
                    default -> {
                        if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
                            depth++;
                        } else if (t == JsonToken.END_OBJECT || t == JsonToken.END_ARRAY) {
                            depth--;
                        }
                        g.copyCurrentEvent(p);
                    }
                }
                if (depth == 0) {
                    break;
                }
                t = p.nextToken();
            } while (t != null);
            if (depth != 0 || p.nextToken() != null) {
                return null; // cut short, or more than one value
            }
        } catch (IOException | RuntimeException e) {
            return null; // not JSON after all (or past the parser's limits): handled as text
        }
        return changed;
    }

    private static boolean startsLikeJson(ByteBuf body) {
        for (int i = body.readerIndex(); i < body.writerIndex(); i++) {
            byte b = body.getByte(i);
            if (b != ' ' && b != '\n' && b != '\r' && b != '\t') {
                return b == '{' || b == '[' || b == '"';
            }
        }
        return false;
    }
}
