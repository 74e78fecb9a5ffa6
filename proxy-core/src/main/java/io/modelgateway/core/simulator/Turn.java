package io.modelgateway.core.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;

/**
 * What the simulated model says in one turn (one chat choice, or one message), before it is
 * written in either style: optional thinking, text split into tokens, or tool calls, and why it
 * stopped. Everything follows from {@link Spec#seed}, so a request body always gets the same turn.
 */
final class Turn {

    enum Finish { END, LENGTH, STOP_SEQUENCE, TOOL_USE }

    enum Format { TEXT, JSON_OBJECT, JSON_SCHEMA }

    /** A tool the turn may call: its name and the JSON schema of its arguments (may be null). */
    record ToolDef(String name, JsonNode schema) {
    }

    /** One tool call: arguments as JSON text, and the same text cut into 2+ stream fragments. */
    record ToolCall(String id, String name, String arguments, List<String> fragments) {
    }

    /**
     * What the request asks of the turn.
     *
     * @param outputTokens   forced answer length (x-sim-output-tokens / settings), or null
     * @param maxTokens      the request's cap on output tokens (thinking included); MAX_VALUE if none
     * @param calls          the tools to call (already decided by tool_choice); empty for a text answer
     * @param thinking       whether to think first
     * @param thinkingBudget cap on thinking tokens
     * @param thinkingShown  false when the thinking text is withheld (counted, not returned)
     */
    record Spec(long seed, Integer outputTokens, int maxTokens, List<String> stops, List<ToolDef> calls,
                String callIdPrefix, Format format, JsonNode schema,
                boolean thinking, int thinkingBudget, boolean thinkingShown) {
    }

    private static final long THINKING_STREAM = 0x7468696e6b696e67L;
    private static final long ID_STREAM = 0x746f6f6c5f696473L;
    private static final int FRAGMENT_CHARS = 8;

    final List<String> thinkingPieces;
    final String thinking;
    final String signature;
    final int thinkingTokens;
    final List<String> textPieces;
    /** The text's pieces joined, made when first asked for (a stream sends the pieces and never asks). */
    private String text;
    final List<ToolCall> toolCalls;
    final Finish finish;
    final String stopSequence;
    final int outputTokens;

    private Turn(List<String> thinkingPieces, String signature, int thinkingTokens, List<String> textPieces,
                 List<ToolCall> toolCalls, Finish finish, String stopSequence, int outputTokens) {
        this.thinkingPieces = thinkingPieces;
        this.thinking = thinkingPieces == null ? null : String.join("", thinkingPieces);
        this.signature = signature;
        this.thinkingTokens = thinkingTokens;
        this.textPieces = textPieces;
        this.toolCalls = toolCalls;
        this.finish = finish;
        this.stopSequence = stopSequence;
        this.outputTokens = outputTokens;
    }

    /** The whole text of the turn. */
    String text() {
        String t = text;
        if (t == null) {
            t = String.join("", textPieces);
            text = t;
        }
        return t;
    }

    boolean hasThinking() {
        return thinkingPieces != null;
    }

    static Turn generate(Spec spec, ObjectMapper mapper) {
        long seed = spec.seed();
        int remaining = spec.maxTokens();

        List<String> thinkingPieces = null;
        String signature = null;
        int thinkingTokens = 0;
        if (spec.thinking()) {
            Prng t = new Prng(seed ^ THINKING_STREAM);
            thinkingTokens = Math.min(Math.min(8 + t.nextInt(9), spec.thinkingBudget()), remaining);
            List<String> words = words(t, thinkingTokens);
            thinkingPieces = spec.thinkingShown() ? words : List.of();
            byte[] sig = new byte[48];
            Prng s = new Prng(Prng.hash(seed, String.join("", words)));
            for (int i = 0; i < sig.length; i++) {
                sig[i] = (byte) s.nextLong();
            }
            signature = Base64.getEncoder().encodeToString(sig);
            remaining -= thinkingTokens;
        }

        if (!spec.calls().isEmpty()) {
            // Tool turns are not capped by max_tokens: arguments cut short would be useless JSON.
            Prng argRng = new Prng(seed);
            Prng ids = new Prng(seed ^ ID_STREAM);
            List<ToolCall> calls = new ArrayList<>(spec.calls().size());
            int tokens = thinkingTokens;
            for (ToolDef def : spec.calls()) {
                String args = SchemaSampler.object(mapper, def.schema(), argRng);
                List<String> fragments = fragments(args);
                calls.add(new ToolCall(spec.callIdPrefix() + ids.base62(24), def.name(), args, fragments));
                tokens += fragments.size() + 1;
            }
            return new Turn(thinkingPieces, signature, thinkingTokens, List.of(), List.copyOf(calls),
                    Finish.TOOL_USE, null, tokens);
        }

        Prng rng = new Prng(seed);
        int natural = spec.outputTokens() != null ? spec.outputTokens()
                : 12 + (int) Long.remainderUnsigned(seed, 37);
        List<String> pieces = switch (spec.format()) {
            case TEXT -> words(rng, Math.min(natural, remaining));
            case JSON_OBJECT -> jsonObjectPieces(rng, natural);
            case JSON_SCHEMA -> chunk(SchemaSampler.value(mapper, spec.schema(), rng));
        };
        Finish finish = Finish.END;
        int wanted = spec.format() == Format.TEXT ? natural : pieces.size();
        if (wanted > remaining) {
            finish = Finish.LENGTH;
            if (pieces.size() > remaining) {
                pieces = pieces.subList(0, remaining);
            }
        }
        String stopSequence = null;
        if (!spec.stops().isEmpty() && !pieces.isEmpty()) {
            String full = String.join("", pieces);
            int at = -1;
            for (String stop : spec.stops()) {
                int i = stop.isEmpty() ? -1 : full.indexOf(stop);
                if (i >= 0 && (at < 0 || i < at)) {
                    at = i;
                    stopSequence = stop;
                }
            }
            if (at >= 0) {
                pieces = cut(pieces, at);
                finish = Finish.STOP_SEQUENCE;
            }
        }
        // unmodifiable without a copy: nothing else holds the list
        return new Turn(thinkingPieces, signature, thinkingTokens, Collections.unmodifiableList(pieces), List.of(),
                finish, stopSequence, thinkingTokens + pieces.size());
    }

    static List<String> words(Prng rng, int count) {
        List<String> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(Vocabulary.piece(rng.nextInt(Vocabulary.WORDS.length), i == 0));
        }
        return out;
    }

    /** {"answer":"w1 w2 …"} as tokens: the opening, the words (safe inside a JSON string), the closing. */
    private static List<String> jsonObjectPieces(Prng rng, int natural) {
        List<String> words = words(rng, Math.max(1, natural - 2));
        List<String> out = new ArrayList<>(words.size() + 2);
        out.add("{\"answer\":\"");
        out.addAll(words);
        out.add("\"}");
        return out;
    }

    /** The pieces whose concatenation is the text before {@code at}; a piece may be cut in two. */
    private static List<String> cut(List<String> pieces, int at) {
        List<String> out = new ArrayList<>();
        int pos = 0;
        for (String p : pieces) {
            if (pos + p.length() <= at) {
                out.add(p);
                pos += p.length();
            } else {
                if (at > pos) {
                    out.add(p.substring(0, at - pos));
                }
                break;
            }
        }
        return out;
    }

    /** Machine-made text (JSON) as stream tokens of a few characters. */
    private static List<String> chunk(String s) {
        List<String> out = new ArrayList<>(s.length() / FRAGMENT_CHARS + 1);
        int i = 0;
        while (i < s.length()) {
            int end = safeEnd(s, Math.min(s.length(), i + FRAGMENT_CHARS));
            out.add(s.substring(i, end));
            i = end;
        }
        return out;
    }

    /** Tool arguments in at least two fragments, as providers stream them. */
    static List<String> fragments(String args) {
        if (args.length() <= FRAGMENT_CHARS) {
            int mid = safeEnd(args, Math.max(1, args.length() / 2));
            return mid >= args.length() ? List.of(args) : List.of(args.substring(0, mid), args.substring(mid));
        }
        return chunk(args);
    }

    /** Moves a cut point off the middle of a surrogate pair. */
    private static int safeEnd(String s, int end) {
        if (end < s.length() && end > 0 && Character.isHighSurrogate(s.charAt(end - 1))) {
            return end + 1;
        }
        return end;
    }
}
