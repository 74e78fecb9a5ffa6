package io.modelgateway.codecs.translate;

import com.fasterxml.jackson.core.JsonGenerator;
import io.modelgateway.codecs.Ids;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;

/**
 * The answer side of a messages request served by a Gemini model (Vertex AI or the Gemini API): a whole
 * {@code generateContent} answer → one Anthropic {@code message}, and a new {@link GeminiStreamToMessages} per
 * stream. Made by {@link MessagesRequestToGemini}; one per exchange, confined to its event loop.
 *
 * <p>The content in the provider's order (see {@link GeminiAnswer}): thought parts as {@code thinking} blocks with
 * their thought signatures as {@code signature} (empty when the provider gave none), text parts as {@code text}
 * blocks, function calls as {@code tool_use} blocks (the provider's call id, or a new {@code toolu_} id); the stop
 * reason of {@link GeminiChunk#stopReason}; {@code stop_sequence} null (Gemini does not say which one matched); the
 * usage of {@link GeminiUsage} ({@code input_tokens} without the cached tokens, which are
 * {@code cache_read_input_tokens}).
 */
final class GeminiResponseToMessages implements ResponseTranslator {
    private final String fallbackModel;
    private Usage usage = Usage.ZERO;

    GeminiResponseToMessages(String fallbackModel) {
        this.fallbackModel = fallbackModel;
    }

    @Override
    public ByteBuf translate(ByteBufAllocator alloc, ByteBuf upstreamBody) throws TranslationException {
        GeminiChunk c = GeminiChunk.answer(upstreamBody);
        GeminiAnswer answer = GeminiAnswer.of(c);
        Usage u = c.usage();
        String model = c.modelVersion != null ? c.modelVersion : fallbackModel;
        ByteBuf buf = JsonOut.answer(alloc, upstreamBody, GeminiResponseToChat.JSON,
                g -> write(g, answer, u, model, c.thoughtsReported()));
        usage = u;
        return buf;
    }

    private static void write(JsonGenerator g, GeminiAnswer a, Usage u, String model, boolean thoughtsReported)
            throws IOException {
        g.writeStartObject();
        g.writeStringField("id", Ids.withPrefix("msg_"));
        g.writeStringField("type", "message");
        g.writeStringField("role", "assistant");
        g.writeStringField("model", model);
        g.writeArrayFieldStart("content");
        for (Object block : a.blocks) {
            if (block instanceof GeminiAnswer.Thinking t) {
                JsonOut.thinkingBlock(g, t.text(), t.signature() != null ? t.signature() : "");
            } else if (block instanceof GeminiAnswer.Text t) {
                JsonOut.textBlock(g, t.text());
            } else if (block instanceof GeminiAnswer.Call call) {
                g.writeStartObject();
                g.writeStringField("type", "tool_use");
                g.writeStringField("id", toolUseId(call.id()));
                g.writeStringField("name", call.name());
                g.writeFieldName("input");
                g.writeRawValue(call.args()); // compact JSON the reader wrote itself
                g.writeEndObject();
            }
        }
        g.writeEndArray();
        g.writeStringField("stop_reason", a.stopReason);
        g.writeNullField("stop_sequence");
        g.writeFieldName("usage");
        UsageJson.writeMessages(g, u, thoughtsReported);
        g.writeEndObject();
    }

    /** The provider's call id when it gave one, else a new {@code toolu_} id. */
    static String toolUseId(String providerId) {
        return providerId != null && !providerId.isEmpty() ? providerId : Ids.withPrefix("toolu_");
    }

    @Override
    public StreamTranslator newStream(ByteBufAllocator alloc) {
        return new GeminiStreamToMessages(alloc, fallbackModel);
    }

    @Override
    public Usage usage() {
        return usage;
    }
}
