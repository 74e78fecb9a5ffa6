package io.modelgateway.codecs.usage;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.modelgateway.codecs.translate.Usage;
import java.io.IOException;

/**
 * Token counts gathered from one or more upstream {@code usage} objects of either style. Fields a later object
 * carries replace earlier ones, fields it leaves out stay: Anthropic streams give the input in
 * {@code message_start} and the final output in {@code message_delta}; an OpenAI usage chunk gives all at once.
 * Event-loop confined, like the exchange that owns it.
 */
public final class UsageCounts {
    private long promptTokens = -1;
    private long completionTokens = -1;
    private long cachedTokens;
    private long cacheWriteTokens;
    private long reasoningTokens;
    private long inputTokens = -1;
    private long outputTokens = -1;
    private long cacheCreation;
    private long cacheRead;

    /** Whether any usage object was read. */
    public boolean known() {
        return promptTokens >= 0 || completionTokens >= 0 || inputTokens >= 0 || outputTokens >= 0;
    }

    /** Whether the output count is known (an OpenAI usage object, or an Anthropic one with output_tokens). */
    public boolean outputKnown() {
        return completionTokens >= 0 || outputTokens >= 0;
    }

    /** The counts in Anthropic's terms; null when nothing was read. */
    public Usage usage() {
        if (!known()) {
            return null;
        }
        if (promptTokens >= 0 || completionTokens >= 0) {
            return Usage.fromOpenAi(Math.max(promptTokens, 0), Math.max(completionTokens, 0), cachedTokens,
                    cacheWriteTokens, reasoningTokens);
        }
        return new Usage(Math.max(inputTokens, 0), Math.max(outputTokens, 0), cacheCreation, cacheRead, 0);
    }

    /**
     * Reads one usage object; the parser is on its {@code START_OBJECT} and is left on its {@code END_OBJECT}.
     * Unknown members are skipped; non-numeric counts are ignored.
     */
    public void read(JsonParser p) throws IOException {
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            if (v == JsonToken.START_OBJECT && name.equals("prompt_tokens_details")) {
                readDetails(p, true);
                continue;
            }
            if (v == JsonToken.START_OBJECT && name.equals("completion_tokens_details")) {
                readDetails(p, false);
                continue;
            }
            if (v != JsonToken.VALUE_NUMBER_INT) {
                p.skipChildren();
                continue;
            }
            long n = Math.max(0, p.getLongValue());
            switch (name) {
                case "prompt_tokens" -> promptTokens = n;
                case "completion_tokens" -> completionTokens = n;
                case "input_tokens" -> inputTokens = n;
                case "output_tokens" -> outputTokens = n;
                case "cache_creation_input_tokens" -> cacheCreation = n;
                case "cache_read_input_tokens" -> cacheRead = n;
                default -> {
                }
            }
        }
        if (t != JsonToken.END_OBJECT) {
            throw new IOException("usage is not a JSON object");
        }
    }

    private void readDetails(JsonParser p, boolean prompt) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            if (v != JsonToken.VALUE_NUMBER_INT) {
                p.skipChildren();
                continue;
            }
            long n = Math.max(0, p.getLongValue());
            if (prompt && name.equals("cached_tokens")) {
                cachedTokens = n;
            } else if (prompt && name.equals("cache_write_tokens")) {
                cacheWriteTokens = n;
            } else if (!prompt && name.equals("reasoning_tokens")) {
                reasoningTokens = n;
            }
        }
    }
}
