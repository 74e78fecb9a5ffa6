package io.modelgateway.bench;

/**
 * Deterministic English-like text for benchmark payloads. Real prompts and answers are not ASCII
 * letters only: this text carries line breaks, double quotes, a backslash and some non-ASCII
 * characters, so JSON bodies built from it have escapes and multi-byte UTF-8 sequences, which is
 * what makes a JSON tokenizer (and a naive decoder) work for its living.
 */
final class Prose {
    private static final String[] SENTENCES = {
        "The gateway sits between callers and hosted providers and forwards every request it can.",
        "Latency budgets are tight: time to first token matters more than anything else to a chat user.",
        "Could you summarise the \"quarterly report\" below in three bullet points?\n",
        "Here is the function that fails:\n    if (a < b) { return \"less\"; }\n",
        "Café owners in Zürich reported a 12 % rise — mostly from tourists → see table 3.",
        "Paths on Windows look like C:\\Users\\alice\\report.txt, which JSON has to escape.",
        "Each answer streams as server-sent events, one small JSON chunk per token.",
        "Please keep the tone friendly but concise, and answer in the user's language.\n\n",
        "Rate limits are enforced per key and per model; a refusal says when to come back.",
        "Numbers such as 3.14159, 2.71828 and 1e-9 appear in technical questions all the time.",
    };

    private Prose() {
    }

    /** About {@code chars} characters of text (whole sentences), starting at sentence {@code seed}. */
    static String text(int chars, int seed) {
        StringBuilder sb = new StringBuilder(chars + 128);
        int i = Math.floorMod(seed, SENTENCES.length);
        while (sb.length() < chars) {
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != '\n') {
                sb.append(' ');
            }
            sb.append(SENTENCES[i]);
            i = (i + 3) % SENTENCES.length; // a stride co-prime with 10: every sentence, in a shuffled order
        }
        return sb.toString();
    }

    /** The text split into the pieces a model would stream: words with their leading space. */
    static String[] tokens(int count, int seed) {
        String[] out = new String[count];
        String text = text(count * 8, seed);
        int at = 0;
        for (int i = 0; i < count; i++) {
            if (at >= text.length()) {
                at = 0;
            }
            int next = text.indexOf(' ', at + 1);
            if (next < 0) {
                next = text.length();
            }
            out[i] = text.substring(at, next);
            at = next;
        }
        return out;
    }
}
