package io.modelgateway.codecs.translate;

/**
 * The usage an Anthropic messages stream reports as it goes, for the translators that read one
 * ({@link MessagesStreamToChat}, {@link MessagesStreamToResponses}): {@code message_start} carries the input and
 * cache counts, {@code message_delta} the cumulative output and any replacements; a count an event leaves out keeps
 * its value. One per stream, confined to its event loop.
 */
final class MessagesUsage {
    private long input;
    private long output;
    private long cacheCreation;
    private long cacheRead;
    private long thinking;
    private boolean counted;
    private boolean thinkingReported;

    /** Takes the counts of a {@code message_start} or {@code message_delta}. */
    void update(MessagesStreamEvent e) {
        if (e.inputTokens != MessagesStreamEvent.ABSENT) {
            input = e.inputTokens;
            counted = true;
        }
        if (e.outputTokens != MessagesStreamEvent.ABSENT) {
            output = e.outputTokens;
            counted = true;
        }
        if (e.cacheCreationTokens != MessagesStreamEvent.ABSENT) {
            cacheCreation = e.cacheCreationTokens;
        }
        if (e.cacheReadTokens != MessagesStreamEvent.ABSENT) {
            cacheRead = e.cacheReadTokens;
        }
        if (e.thinkingTokens != MessagesStreamEvent.ABSENT) {
            thinking = e.thinkingTokens;
            thinkingReported = true;
        }
    }

    /** The counts so far (a new value each call). */
    Usage usage() {
        return new Usage(input, output, cacheCreation, cacheRead, thinking);
    }

    /** Whether an input or output count came at all (a failure then still reports the usage). */
    boolean counted() {
        return counted;
    }

    /** Whether the thinking tokens were counted (the chat caller's usage then details them). */
    boolean thinkingReported() {
        return thinkingReported;
    }
}
