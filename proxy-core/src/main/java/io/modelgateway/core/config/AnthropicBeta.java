package io.modelgateway.core.config;

import java.util.ArrayList;
import java.util.List;

/**
 * What an Anthropic-type provider gets of a messages caller's {@code anthropic-beta} headers ({@code anthropic_beta:}
 * in the config): every value as sent ({@link #FORWARD}, the default), none ({@link #DROP}), or only the beta names
 * an allow-list matches. Chat-completions callers' Anthropic headers never reach a provider, and no other provider
 * type gets them; that rule lives with the upstream request, this one only narrows it.
 *
 * @param mode    forward, drop, or allow
 * @param allowed for {@link Mode#ALLOW}: beta names or globs ({@code *}, {@code ?}), matched case-sensitively
 */
public record AnthropicBeta(Mode mode, List<String> allowed) {
    public enum Mode { FORWARD, DROP, ALLOW }

    public static final AnthropicBeta FORWARD = new AnthropicBeta(Mode.FORWARD, List.of());
    public static final AnthropicBeta DROP = new AnthropicBeta(Mode.DROP, List.of());

    public AnthropicBeta {
        allowed = List.copyOf(allowed);
    }

    public static AnthropicBeta allow(List<String> names) {
        return new AnthropicBeta(Mode.ALLOW, names);
    }

    /** Whether no value can pass (drop, or an empty allow-list): the caller's headers need not be read at all. */
    public boolean dropsAll() {
        return mode == Mode.DROP || (mode == Mode.ALLOW && allowed.isEmpty());
    }

    /**
     * One {@code anthropic-beta} header value as it goes upstream: unchanged (byte for byte) when every beta name in
     * its comma list passes, the names that pass joined by {@code ,} when some do not, null when none does.
     */
    public String filter(String value) {
        if (mode == Mode.FORWARD) {
            return value;
        }
        if (dropsAll()) {
            return null;
        }
        List<String> kept = null;
        int start = 0;
        boolean removed = false;
        while (start <= value.length()) {
            int comma = value.indexOf(',', start);
            int end = comma < 0 ? value.length() : comma;
            String name = value.substring(start, end).strip();
            if (allows(name)) {
                if (kept == null) {
                    kept = new ArrayList<>(4);
                }
                kept.add(name);
            } else {
                removed = true;
            }
            start = end + 1;
        }
        if (!removed) {
            return value;
        }
        return kept == null ? null : String.join(",", kept);
    }

    private boolean allows(String name) {
        if (name.isEmpty()) {
            return false;
        }
        for (int i = 0; i < allowed.size(); i++) {
            if (Glob.matches(allowed.get(i), name, false)) {
                return true;
            }
        }
        return false;
    }

    /** As the config spells it. */
    @Override
    public String toString() {
        return switch (mode) {
            case FORWARD -> "forward";
            case DROP -> "drop";
            case ALLOW -> allowed.toString();
        };
    }
}
