package io.modelgateway.codecs.bedrock;

import io.modelgateway.codecs.json.BodySplicer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The InvokeModel body of a Claude model on Bedrock, made from an Anthropic Messages request by splicing, not
 * re-encoding (design rule 2): the {@code model} member (the model is in the path) is replaced by
 * {@code "anthropic_version":"bedrock-2023-05-31"} and, when the caller sent {@code anthropic-beta} values, by an
 * {@code "anthropic_beta":[…]} member as well; the {@code stream} member (the operation says it) is removed. Every
 * other byte is the caller's.
 */
public final class BedrockInvokeBody {
    /** The Messages API version Bedrock's Claude models take in the body. */
    public static final String ANTHROPIC_VERSION = "bedrock-2023-05-31";
    private static final byte[] VERSION_MEMBER =
            ("\"anthropic_version\":\"" + ANTHROPIC_VERSION + "\"").getBytes(StandardCharsets.US_ASCII);

    private BedrockInvokeBody() {
    }

    /**
     * @param body              a Messages request body (borrowed)
     * @param modelMemberStart  offset of its {@code "model"} member's name token (from the reader index)
     * @param modelEnd          offset just past the model's value
     * @param streamMemberStart offset of the {@code "stream"} member, -1 when absent
     * @param streamMemberEnd   offset just past the stream member's value
     * @param betas             the {@code anthropic-beta} values to send (comma lists already split), may be empty
     * @return a new buffer (slices of the body around the new bytes) the caller owns
     */
    public static ByteBuf fromMessages(ByteBufAllocator alloc, ByteBuf body, int modelMemberStart, int modelEnd,
            int streamMemberStart, int streamMemberEnd, List<String> betas) {
        BodySplicer.Edit model = new BodySplicer.Edit(modelMemberStart, modelEnd, versionMember(betas));
        if (streamMemberStart < 0) {
            return BodySplicer.splice(alloc, body, model);
        }
        return BodySplicer.splice(alloc, body, model,
                BodySplicer.removeMember(body, streamMemberStart, streamMemberEnd));
    }

    private static byte[] versionMember(List<String> betas) {
        if (betas.isEmpty()) {
            return VERSION_MEMBER;
        }
        StringBuilder b = new StringBuilder(64).append(new String(VERSION_MEMBER, StandardCharsets.US_ASCII))
                .append(",\"anthropic_beta\":[");
        for (int i = 0; i < betas.size(); i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append(new String(BodySplicer.quote(betas.get(i)), StandardCharsets.UTF_8));
        }
        return b.append(']').toString().getBytes(StandardCharsets.UTF_8);
    }
}
