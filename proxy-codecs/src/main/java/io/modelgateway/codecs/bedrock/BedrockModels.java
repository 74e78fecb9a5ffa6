package io.modelgateway.codecs.bedrock;

import io.modelgateway.codecs.aws.SigV4Signer;
import java.util.regex.Pattern;

/**
 * Which Bedrock API serves a model, and its request paths. A model id naming an Anthropic model
 * ({@code anthropic.claude-…}, or with a cross-region inference prefix such as {@code us.anthropic.…} or
 * {@code global.anthropic.…}; in an ARN, the part after its last {@code /}) is served through InvokeModel with the
 * Anthropic Messages body; any other through Converse, which serves every model that takes messages.
 */
public final class BedrockModels {
    /** {@code anthropic.…}, or a region prefix then {@code anthropic.…}. */
    private static final Pattern CLAUDE = Pattern.compile("([a-z]{2,}(-[a-z]+)?\\.)?anthropic\\..+");

    /** The operation of an upstream request. */
    public enum Operation {
        INVOKE("/invoke"), INVOKE_STREAM("/invoke-with-response-stream"), CONVERSE("/converse"),
        CONVERSE_STREAM("/converse-stream");

        private final String suffix;

        Operation(String suffix) {
            this.suffix = suffix;
        }

        public String suffix() {
            return suffix;
        }

        public boolean streams() {
            return this == INVOKE_STREAM || this == CONVERSE_STREAM;
        }

        public boolean converse() {
            return this == CONVERSE || this == CONVERSE_STREAM;
        }

        /** The operation for a model and whether the request streams. */
        public static Operation of(String modelId, boolean stream) {
            if (isAnthropic(modelId)) {
                return stream ? INVOKE_STREAM : INVOKE;
            }
            return stream ? CONVERSE_STREAM : CONVERSE;
        }
    }

    private BedrockModels() {
    }

    /** Whether the model is served through InvokeModel with the Anthropic Messages body. */
    public static boolean isAnthropic(String modelId) {
        String id = modelId.substring(modelId.lastIndexOf('/') + 1);
        return CLAUDE.matcher(id).matches();
    }

    /** The request path as sent: {@code /model/<model id, URI-encoded>/<operation>}. */
    public static String path(String modelId, Operation operation) {
        StringBuilder b = new StringBuilder(modelId.length() + 40).append("/model/");
        SigV4Signer.uriEncode(modelId, false, b);
        return b.append(operation.suffix()).toString();
    }

    /**
     * The canonical URI SigV4 signs for a path as sent: every service but S3 encodes the path once more, so the
     * {@code %3A} of a model id's colon is signed as {@code %253A}.
     */
    public static String canonicalUri(String path) {
        return SigV4Signer.uriEncode(path, true);
    }
}
