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

    /**
     * Where the top-level {@code "model"} and {@code "stream"} members of a Messages body are (offsets from the reader
     * index), and the model id, found by one walk of the bytes that knows strings, escapes and nesting only (the body
     * was validated as JSON already). {@code modelMemberStart} is -1 when there is no string {@code model} member
     * (or it holds an escape: no Bedrock model id does); {@code streamMemberStart} -1 when there is no stream member.
     */
    public record Members(String model, int modelMemberStart, int modelEnd, int streamMemberStart,
            int streamMemberEnd) {
    }

    /** Finds the {@link Members} of a Messages body (borrowed, not consumed). */
    public static Members scan(ByteBuf body) {
        int base = body.readerIndex();
        int to = body.readableBytes();
        int depth = 0;
        boolean expectKey = false;
        String model = null;
        int modelStart = -1;
        int modelEnd = -1;
        int streamStart = -1;
        int streamEnd = -1;
        for (int i = 0; i < to; i++) {
            byte b = body.getByte(base + i);
            switch (b) {
                case '{', '[' -> {
                    depth++;
                    expectKey = b == '{' && depth == 1;
                }
                case '}', ']' -> depth--;
                case ',' -> expectKey = depth == 1;
                case '"' -> {
                    int end = stringEnd(body, base, i + 1, to);
                    if (end < 0) {
                        return new Members(model, modelStart, modelEnd, streamStart, streamEnd);
                    }
                    if (depth != 1 || !expectKey) {
                        i = end;
                        continue;
                    }
                    expectKey = false;
                    int j = skipSpace(body, base, end + 1, to);
                    if (j >= to || body.getByte(base + j) != ':') {
                        return new Members(model, modelStart, modelEnd, streamStart, streamEnd);
                    }
                    j = skipSpace(body, base, j + 1, to);
                    int nameLength = end - i - 1;
                    if (nameLength == 5 && is(body, base + i + 1, "model") && j < to && body.getByte(base + j) == '"') {
                        int valueEnd = stringEnd(body, base, j + 1, to);
                        if (valueEnd < 0) {
                            break;
                        }
                        if (body.indexOf(base + j + 1, base + valueEnd, (byte) '\\') < 0) {
                            model = body.toString(base + j + 1, valueEnd - j - 1, StandardCharsets.UTF_8);
                            modelStart = i;
                            modelEnd = valueEnd + 1;
                        }
                        i = valueEnd;
                    } else if (nameLength == 6 && is(body, base + i + 1, "stream")) {
                        int k = j;
                        while (k < to && Character.isLetter(body.getByte(base + k))) {
                            k++;
                        }
                        streamStart = i;
                        streamEnd = k;
                        i = k - 1;
                    } else {
                        i = j - 1;
                    }
                }
                default -> {
                }
            }
        }
        return new Members(model, modelStart, modelEnd, streamStart, streamEnd);
    }

    /** The offset of the closing quote of a string whose content starts at {@code from}; -1 when unterminated. */
    private static int stringEnd(ByteBuf body, int base, int from, int to) {
        int k = from;
        while (k < to) {
            byte c = body.getByte(base + k);
            if (c == '"') {
                return k;
            }
            k += c == '\\' ? 2 : 1;
        }
        return -1;
    }

    private static int skipSpace(ByteBuf body, int base, int from, int to) {
        int k = from;
        while (k < to) {
            byte c = body.getByte(base + k);
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
                break;
            }
            k++;
        }
        return k;
    }

    private static boolean is(ByteBuf body, int at, String ascii) {
        for (int i = 0; i < ascii.length(); i++) {
            if (body.getByte(at + i) != ascii.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The InvokeModel body of a Messages body: as {@link #fromMessages}, with the members found by {@link #scan};
     * null when the body names no model.
     */
    public static ByteBuf fromMessages(ByteBufAllocator alloc, ByteBuf body, Members members, List<String> betas) {
        if (members.modelMemberStart() < 0) {
            return null;
        }
        return fromMessages(alloc, body, members.modelMemberStart(), members.modelEnd(), members.streamMemberStart(),
                members.streamMemberEnd(), betas);
    }
}
