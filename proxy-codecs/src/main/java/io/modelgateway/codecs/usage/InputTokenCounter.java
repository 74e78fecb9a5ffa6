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

/**
 * The gateway's own count of the input tokens of an Anthropic-style request (a {@code messages} or
 * {@code messages/count_tokens} body), for a deployment whose provider cannot count them: OpenAI's {@code o200k_base}
 * encoding (jtokkit, the encoding of OpenAI's current chat models, shipped inside the library, no download) over
 * the text the upstream will read — the system prompt, each message's text, tool calls and tool results, and each
 * tool's name, description and schema — plus OpenAI's framing of a chat request: 3 tokens per message and 3 to
 * prime the reply. It is an estimate (contract 8.9): another model's tokenizer counts differently.
 */
public final class InputTokenCounter {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Encoding O200K = Encodings.newLazyEncodingRegistry().getEncoding(EncodingType.O200K_BASE);
    /** OpenAI's framing: tokens around each message, and before the reply. */
    private static final int PER_MESSAGE = 3;
    private static final int REPLY_PRIMING = 3;

    private InputTokenCounter() {
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

    /** The count for a parsed Anthropic-style request. */
    public static long messagesRequest(JsonNode root) {
        long n = REPLY_PRIMING;
        JsonNode system = root.get("system");
        if (system != null && !system.isNull()) {
            n += PER_MESSAGE + text("system") + content(system); // a chat request's system message
        }
        for (JsonNode m : root.path("messages")) {
            n += PER_MESSAGE + text(m.path("role").asText("")) + content(m.get("content"));
        }
        for (JsonNode t : root.path("tools")) {
            n += text(t.path("name").asText("")) + text(t.path("description").asText(""));
            JsonNode schema = t.get("input_schema");
            if (schema != null) {
                n += text(schema.toString());
            }
        }
        return n;
    }

    /** A string, or an array of content blocks (text, thinking, tool use, tool results; images are not text). */
    private static long content(JsonNode c) {
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

    private static long text(String s) {
        return s.isEmpty() ? 0 : O200K.countTokensOrdinary(s);
    }
}
