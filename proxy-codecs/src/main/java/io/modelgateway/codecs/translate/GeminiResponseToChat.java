package io.modelgateway.codecs.translate;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.modelgateway.codecs.Ids;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;

/**
 * The answer side of a chat request served by a Gemini model (Vertex AI or the Gemini API): a whole
 * {@code generateContent} answer → one {@code chat.completion}, and a new {@link GeminiStreamToChat} per stream.
 * Made by {@link ChatRequestToGemini} with what the request asked for; one per exchange, confined to its loop.
 *
 * <p>What the caller sees: the text parts joined as {@code message.content}; function calls as {@code tool_calls}
 * (the provider's call id, or a new {@code call_} id); thought parts as {@code reasoning} and, with their thought
 * signatures, as {@code reasoning_details} (GD-16), which a caller may send back to keep the model's signatures;
 * the finish reason mapped through Anthropic's terms (STOP {@code stop} or {@code tool_calls}, MAX_TOKENS
 * {@code length}, a filter's stop {@code content_filter}); the usage of {@link GeminiUsage}. A prompt the provider's
 * filters refused, or an answer they stopped before any of it was made, is a clear 400 ({@code content_filter}).
 */
final class GeminiResponseToChat implements ResponseTranslator {
    static final JsonFactory JSON = ChatRequestToMessages.JSON.getFactory();

    private final String completionId;
    private final long created;
    private final String fallbackModel;
    private final boolean includeUsage;
    private final boolean excludeReasoning;
    private Usage usage = Usage.ZERO;

    GeminiResponseToChat(String completionId, long created, String fallbackModel, boolean includeUsage,
            boolean excludeReasoning) {
        this.completionId = completionId;
        this.created = created;
        this.fallbackModel = fallbackModel;
        this.includeUsage = includeUsage;
        this.excludeReasoning = excludeReasoning;
    }

    @Override
    public ByteBuf translate(ByteBufAllocator alloc, ByteBuf upstreamBody) throws TranslationException {
        GeminiChunk c = GeminiChunk.answer(upstreamBody);
        GeminiAnswer answer = GeminiAnswer.of(c); // throws the provider's error, or a block, as the caller's error
        Usage u = c.usage();
        String finish = StopReasons.toFinishReason(answer.stopReason, false);
        String model = c.modelVersion != null ? c.modelVersion : fallbackModel;
        boolean thoughtsReported = c.thoughtsReported();
        ByteBuf buf = JsonOut.answer(alloc, upstreamBody, JSON, g -> write(g, answer, u, thoughtsReported, model,
                finish));
        usage = u;
        return buf;
    }

    private void write(JsonGenerator g, GeminiAnswer a, Usage u, boolean thoughtsReported, String model,
            String finish) throws IOException {
        JsonOut.completionStart(g, completionId, created, model);
        JsonOut.completionContent(g, a.text, !a.calls.isEmpty());
        if (!a.calls.isEmpty()) {
            g.writeArrayFieldStart("tool_calls");
            for (GeminiAnswer.Call call : a.calls) {
                g.writeStartObject();
                JsonOut.toolCallFields(g, call.id() != null && !call.id().isEmpty() ? call.id()
                        : Ids.withPrefix("call_"), call.name(), call.args());
                g.writeEndObject();
            }
            g.writeEndArray();
        }
        if (!excludeReasoning && !a.thinking.isEmpty()) {
            if (a.reasoning.length() > 0) {
                g.writeStringField("reasoning", a.reasoning.toString());
            }
            g.writeArrayFieldStart("reasoning_details");
            for (int k = 0; k < a.thinking.size(); k++) {
                GeminiAnswer.Thinking t = a.thinking.get(k);
                JsonOut.reasoningText(g, t.text(), t.signature(), k);
            }
            g.writeEndArray();
        }
        JsonOut.completionEnd(g, finish, u, thoughtsReported);
    }

    @Override
    public StreamTranslator newStream(ByteBufAllocator alloc) {
        return new GeminiStreamToChat(alloc, completionId, created, fallbackModel, includeUsage, excludeReasoning);
    }

    @Override
    public Usage usage() {
        return usage;
    }
}
