package io.modelgateway.codecs.translate;

import io.modelgateway.codecs.Saturating;

/**
 * The one mapping of a Gemini {@code usageMetadata} (Vertex AI and the Gemini API alike) onto the gateway's
 * {@link Usage}, used by the answer translators and by the accounting ({@code UsageCounts}) so both read the same
 * tokens from the same fields:
 * <ul>
 *   <li>input = {@code promptTokenCount} + {@code toolUsePromptTokenCount}, of which
 *       {@code cachedContentTokenCount} were cache reads ({@link Usage#cacheRead()}; Gemini has no cache writes
 *       billed per request);</li>
 *   <li>output = {@code candidatesTokenCount} + {@code thoughtsTokenCount}: Gemini counts the thinking apart from
 *       the candidates, and bills both as output; the thinking part is {@link Usage#reasoning()}.</li>
 * </ul>
 * Counts are the ones the readers already believed ({@code TokenCount}); absent ones are passed as 0. The sums
 * saturate.
 */
public final class GeminiUsage {
    private GeminiUsage() {
    }

    /**
     * @param prompt     {@code promptTokenCount} (includes the cached tokens)
     * @param candidates {@code candidatesTokenCount} (the answer, thinking excluded)
     * @param cached     {@code cachedContentTokenCount}
     * @param thoughts   {@code thoughtsTokenCount}
     * @param toolUse    {@code toolUsePromptTokenCount} (server-side tool results fed back as input)
     */
    public static Usage usage(long prompt, long candidates, long cached, long thoughts, long toolUse) {
        long input = Saturating.add(prompt, toolUse);
        long read = Math.min(cached, input);
        return new Usage(Saturating.subtract(input, read), Saturating.add(candidates, thoughts), 0, read, thoughts);
    }
}
