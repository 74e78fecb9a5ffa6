package io.modelgateway.codecs.usage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The gateway's own count of the input tokens of an Anthropic-style request (a {@code messages} or
 * {@code messages/count_tokens} body), for a deployment whose provider cannot count them: OpenAI's {@code o200k_base}
 * encoding (jtokkit, the encoding of OpenAI's current chat models, shipped inside the library, no download) over
 * the text the upstream will read — the system prompt, each message's text, tool calls and tool results, and each
 * tool's name, description and schema — plus OpenAI's framing of a chat request: 3 tokens per message and 3 to
 * prime the reply. It is an estimate (contract 5.12): another model's tokenizer counts differently.
 *
 * <p>The count runs on an event loop, so its work is bounded (design rule 8): the first {@link #EXACT_CHARS}
 * characters of text are tokenized, the rest is counted at the rate measured on them. Loading the encoding takes
 * seconds on a busy machine, so it is never loaded on the caller's thread: {@link #warmUp()} loads it on a thread
 * of its own (at start, or at the first count), and until it is there a count is the text's characters / 4.
 */
public final class InputTokenCounter {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Characters tokenized exactly per request (about 8,000 tokens of English). */
    static final int EXACT_CHARS = 32 * 1024;
    /** OpenAI's framing: tokens around each message, and before the reply. */
    private static final int PER_MESSAGE = 3;
    private static final int REPLY_PRIMING = 3;

    /** Set once loaded; null until then. */
    private static volatile Encoding encoding;
    private static final AtomicBoolean LOADING = new AtomicBoolean();

    private final Encoding enc = encoding;

    private long exactChars;
    private long exactTokens;
    private long restChars;

    private InputTokenCounter() {
    }

    /** Starts loading the encoding on a daemon thread (once), so no request waits for it; returns at once. */
    public static void warmUp() {
        if (encoding == null && LOADING.compareAndSet(false, true)) {
            Thread t = new Thread(InputTokenCounter::load, "tokenizer-warm-up");
            t.setDaemon(true);
            t.start();
        }
    }

    /** Loads the encoding on this thread (the warm-up thread; tests); at once when it is already loaded. */
    public static void load() {
        if (encoding == null) {
            Encoding e = Encodings.newLazyEncodingRegistry().getEncoding(EncodingType.O200K_BASE);
            e.countTokensOrdinary("warm");
            encoding = e;
        }
    }

    /** Whether counts are the tokenizer's (else characters / 4, while it loads). */
    public static boolean ready() {
        return encoding != null;
    }

    /** The count for a request body (not consumed); -1 when it is not a readable JSON object. */
    public static long messagesRequest(ByteBuf body) {
        try (InputStream in = new ByteBufInputStream(body.duplicate())) {
            JsonNode root = JSON.readTree(in);
            return root != null && root.isObject() ? messagesRequest(root) : -1;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * The count for texts to embed: each text's tokens, no framing (an embedding model reads the text alone). Bounded
     * as every count is: past {@link #EXACT_CHARS} the rest is counted at the rate measured.
     */
    public static long texts(Iterable<String> texts) {
        InputTokenCounter c = new InputTokenCounter();
        long n = 0;
        for (String t : texts) {
            n += c.text(t);
        }
        return n + c.rest();
    }

    /** The count for a parsed Anthropic-style request. */
    public static long messagesRequest(JsonNode root) {
        InputTokenCounter c = new InputTokenCounter();
        long n = REPLY_PRIMING;
        JsonNode system = root.get("system");
        if (system != null && !system.isNull()) {
            n += PER_MESSAGE + c.text("system") + c.content(system); // a chat request's system message
        }
        for (JsonNode m : root.path("messages")) {
            n += PER_MESSAGE + c.text(m.path("role").asText("")) + c.content(m.get("content"));
        }
        for (JsonNode t : root.path("tools")) {
            n += c.text(t.path("name").asText("")) + c.text(t.path("description").asText(""));
            JsonNode schema = t.get("input_schema");
            if (schema != null) {
                n += c.text(schema.toString());
            }
        }
        return n + c.rest();
    }

    /** A string, or an array of content blocks (text, thinking, tool use, tool results; images are not text). */
    private long content(JsonNode c) {
        if (c == null || c.isNull()) {
            return 0;
        }
        if (c.isTextual()) {
            return text(c.textValue());
        }
        long n = 0;
        for (JsonNode block : c) {
            n += text(block.path("text").asText(""));
            n += text(block.path("thinking").asText(""));
            JsonNode input = block.get("input");
            if (input != null) {
                n += text(block.path("name").asText("")) + text(input.toString());
            }
            JsonNode result = block.get("content");
            if (result != null) {
                n += content(result);
            }
        }
        return n;
    }

    /** Tokenizes while the budget lasts; what is past it is only measured, for {@link #rest()}. */
    private long text(String s) {
        if (s.isEmpty()) {
            return 0;
        }
        if (enc == null) {
            warmUp();
            return (s.length() + 3) / 4;
        }
        long budget = EXACT_CHARS - exactChars;
        if (s.length() <= budget) {
            long n = enc.countTokensOrdinary(s);
            exactChars += s.length();
            exactTokens += n;
            return n;
        }
        restChars += s.length() - Math.max(0, budget);
        if (budget <= 0) {
            return 0;
        }
        long n = enc.countTokensOrdinary(s.substring(0, (int) budget));
        exactChars += budget;
        exactTokens += n;
        return n;
    }

    /** The text past the budget, at the rate of the text tokenized (rounded up). */
    private long rest() {
        if (restChars == 0) {
            return 0;
        }
        return (restChars * exactTokens + exactChars - 1) / exactChars;
    }
}
