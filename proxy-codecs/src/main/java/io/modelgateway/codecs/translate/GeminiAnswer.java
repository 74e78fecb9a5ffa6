package io.modelgateway.codecs.translate;

import java.util.ArrayList;
import java.util.List;

/**
 * A whole Gemini answer ({@link GeminiChunk} of a {@code generateContent} body) sorted into what both caller styles
 * are written from: its content as messages-style blocks in order (thinking, text, tool use), and the same content
 * by kind for the chat style. Thought signatures follow one rule, the stream translators' too: a signature on a
 * thought part signs that thinking block; a signature on any other part signs the thinking block just before it,
 * or else becomes a thinking block of its own with no text, right before the part — so a caller that sends the
 * thinking back (messages blocks, or chat {@code reasoning_details}) hands the request translator the signature
 * where it puts it back: on the part after the thinking.
 */
final class GeminiAnswer {
    record Thinking(String text, String signature) {
    }

    record Call(String id, String name, String args) {
    }

    record Text(String text) {
    }

    /** The content in order: {@link Thinking}, {@link Text} (consecutive text parts joined) and {@link Call}. */
    final List<Object> blocks = new ArrayList<>();
    final List<Thinking> thinking = new ArrayList<>();
    final List<Call> calls = new ArrayList<>();
    final StringBuilder text = new StringBuilder();
    /** The thought texts, joined. */
    final StringBuilder reasoning = new StringBuilder();
    /** In Anthropic's terms ({@link GeminiChunk#stopReason}). */
    String stopReason;

    private StringBuilder openThinking;
    private StringBuilder openText;

    private GeminiAnswer() {
    }

    /**
     * Sorts a whole answer.
     *
     * @throws TranslationException the provider's error object, a blocked prompt, an answer the filters stopped
     *                              before any of it was made, or a body with no candidate at all
     */
    static GeminiAnswer of(GeminiChunk c) throws TranslationException {
        if (c.error) {
            throw new TranslationException(c.error());
        }
        if (c.blockReason != null) {
            throw new TranslationException(c.blocked());
        }
        if (!c.candidateSeen && c.finishReason == null) {
            throw TranslationException.unreadableAnswer();
        }
        GeminiAnswer a = new GeminiAnswer();
        for (int i = 0; i < c.partCount; i++) {
            a.add(c.part(i));
        }
        a.closeThinking(null);
        a.closeText();
        if (a.blocks.isEmpty() && GeminiChunk.filtered(c.finishReason)) {
            throw new TranslationException(c.blocked());
        }
        a.stopReason = GeminiChunk.stopReason(c.finishReason, !a.calls.isEmpty());
        return a;
    }

    private void add(GeminiChunk.Part p) {
        if (p.kind == GeminiChunk.Kind.THOUGHT) {
            closeText();
            if (openThinking == null) {
                openThinking = new StringBuilder();
            }
            if (p.text != null) {
                openThinking.append(p.text);
                reasoning.append(p.text);
            }
            if (p.signature != null) {
                closeThinking(p.signature);
            }
            return;
        }
        if (p.signature != null) {
            closeText();
            if (openThinking == null) {
                openThinking = new StringBuilder();
            }
            closeThinking(p.signature);
        } else if (openThinking != null) {
            closeThinking(null);
        }
        switch (p.kind) {
            case TEXT -> {
                if (p.text != null && !p.text.isEmpty()) {
                    if (openText == null) {
                        openText = new StringBuilder();
                    }
                    openText.append(p.text);
                    text.append(p.text);
                }
            }
            case CALL -> {
                closeText();
                Call call = new Call(p.id, p.name != null ? p.name : "", p.args != null ? p.args : "{}");
                calls.add(call);
                blocks.add(call);
            }
            default -> {
                // a part with no caller form (code execution, inline data)
            }
        }
    }

    private void closeThinking(String signature) {
        if (openThinking == null) {
            return;
        }
        Thinking t = new Thinking(openThinking.toString(), signature);
        openThinking = null;
        thinking.add(t);
        blocks.add(t);
    }

    private void closeText() {
        if (openText != null) {
            blocks.add(new Text(openText.toString()));
            openText = null;
        }
    }
}
