package io.modelgateway.core.upstream;

import io.modelgateway.core.config.GoogleSettings;
import io.modelgateway.core.config.ProviderType;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;

/**
 * The request paths of a {@code vertex} or {@code gemini} provider, part of its {@link UpstreamTarget} (one per
 * provider per event loop, confined to it: no lock). The model is in the path and the stream is another method, so
 * there are two paths per model, made on the model's first request and kept: a request costs one map lookup.
 * <ul>
 *   <li>gemini: {@code /v1beta/models/{model}:generateContent}, {@code …:streamGenerateContent?alt=sse};</li>
 *   <li>vertex: {@code /v1/projects/{project}/locations/{location}/publishers/google/models/{model}:…}, and for a
 *       model starting with {@code claude}: {@code …/publishers/anthropic/models/{model}:rawPredict},
 *       {@code :streamRawPredict} (Claude on Vertex AI, Anthropic's messages and SSE).</li>
 * </ul>
 * An embeddings request goes to the model's {@code :predict} on Vertex AI and {@code :batchEmbedContents} on the
 * Gemini API (GD-31), a third path kept with the two.
 */
final class GooglePaths {
    /** More models than any config names: past it the map is simply emptied (a reload brings new targets). */
    private static final int MAX_MODELS = 1024;

    private final String prefix;
    /** vertex: Claude's models are Anthropic's publisher, with rawPredict; null for gemini. */
    private final String claudePrefix;
    private final HashMap<String, String[]> byModel = new HashMap<>();

    GooglePaths(ProviderType type, GoogleSettings google) {
        prefix = type == ProviderType.GEMINI ? "/v1beta/models/"
                : "/v1/projects/" + google.project() + "/locations/" + google.location() + "/publishers/google/models/";
        claudePrefix = type == ProviderType.GEMINI ? null
                : "/v1/projects/" + google.project() + "/locations/" + google.location() + "/publishers/anthropic/models/";
    }

    /** The path of a {@code generateContent} ({@code stream}: {@code streamGenerateContent} with SSE) of {@code model}. */
    String path(String model, boolean stream) {
        return paths(model)[stream ? 1 : 0];
    }

    /** The path of an embeddings request to {@code model}: {@code :predict} (vertex), {@code :batchEmbedContents} (gemini). */
    String embeddingsPath(String model) {
        return paths(model)[2];
    }

    private String[] paths(String model) {
        String[] paths = byModel.get(model);
        if (paths == null) {
            if (byModel.size() >= MAX_MODELS) {
                byModel.clear();
            }
            if (claudePrefix != null && model.startsWith("claude")) {
                String m = claudePrefix + encode(model);
                paths = new String[] {m + ":rawPredict", m + ":streamRawPredict", m + ":predict"};
            } else {
                String m = prefix + encode(model.startsWith("models/") ? model.substring(7) : model);
                paths = new String[] {m + ":generateContent", m + ":streamGenerateContent?alt=sse",
                        m + (claudePrefix == null ? ":batchEmbedContents" : ":predict")};
            }
            byModel.put(model, paths);
        }
        return paths;
    }

    /**
     * A model name as one path segment: letters, digits, '-', '_', '.', '@' (Vertex's version suffix) pass as they
     * are, anything else is percent-encoded (UTF-8), so no name can add a segment, a method or a query.
     */
    static String encode(String model) {
        boolean dots = model.equals(".") || model.equals("..");
        StringBuilder out = new StringBuilder(model.length() + 8);
        for (byte raw : model.getBytes(StandardCharsets.UTF_8)) {
            int b = raw & 0xff;
            boolean plain = b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
                    || b == '-' || b == '_' || b == '@' || b == '.' && !dots;
            if (plain) {
                out.append((char) b);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(b >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(b & 0xf, 16)));
            }
        }
        return out.toString();
    }
}
