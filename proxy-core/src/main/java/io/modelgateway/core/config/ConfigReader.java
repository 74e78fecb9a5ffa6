package io.modelgateway.core.config;

import com.fasterxml.jackson.core.JsonToken;
import io.modelgateway.core.config.EnvExpander.UnsetVariableException;
import io.modelgateway.core.config.YamlTree.Field;
import io.modelgateway.core.config.YamlTree.ListNode;
import io.modelgateway.core.config.YamlTree.MapNode;
import io.modelgateway.core.config.YamlTree.Node;
import io.modelgateway.core.config.YamlTree.Scalar;
import java.math.BigInteger;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The reading machinery the config loader's parts share: the name of the config (for the {@code (file:line)}
 * suffix of every message) and the environment for {@code ${VAR}} references; the error and warning builders,
 * which name the field's path and line; {@code ${VAR}} expansion; text and mapping readers; the typed readers of a
 * {@link Section}, with the "did you mean" hint for an unknown field.
 *
 * <p>{@link ConfigLoader} (the top level) and one class per section ({@link ServerSection}, {@link RedisSection},
 * {@link ProvidersSection}, {@link ModelsSection}, {@link KeysSection}, {@link LimitsSection}) extend it, so that
 * {@code error(...)}, {@code warn(...)}, {@code text(...)} and {@code section(...)} read the same in all of them.
 * It holds nothing but the config's name and environment; every reader of one load shares them.
 */
class ConfigReader {

    /** What a provider or key name may be made of. */
    static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]+");

    final String source;
    final Map<String, String> env;

    ConfigReader(String source, Map<String, String> env) {
        this.source = source;
        this.env = env;
    }

    /** A reader of the same load as {@code load}: the same config name and environment. */
    ConfigReader(ConfigReader load) {
        this(load.source, load.env);
    }

    /** The {@code " (file:line)"} suffix every message ends with. */
    static String at(String source, int line) {
        return " (" + source + ":" + line + ")";
    }

    static String pathOrRoot(String path) {
        return path.isEmpty() ? "(root)" : path;
    }

    ConfigException error(String path, int line, String problem) {
        return new ConfigException(pathOrRoot(path) + ": " + problem + at(source, line));
    }

    void warn(String path, int line, String problem) {
        ConfigLoader.warn(path + ": " + problem + at(source, line));
    }

    String expand(String raw, String path, int line) throws ConfigException {
        try {
            return EnvExpander.expand(raw, env);
        } catch (UnsetVariableException e) {
            throw error(path, line, e.describe());
        } catch (IllegalArgumentException e) {
            throw error(path, line, e.getMessage());
        }
    }

    /** A list item or map value that must be a string; expanded. */
    String text(Node node, String path) throws ConfigException {
        return text(node, path, node.line());
    }

    String text(Node node, String path, int line) throws ConfigException {
        if (!(node instanceof Scalar s) || s.isNull()) {
            throw error(path, line, "must be a string, not " + kind(node));
        }
        return expand(s.text(), path, line);
    }

    Section section(Node node, String path, int line) throws ConfigException {
        if (!(node instanceof MapNode map)) {
            throw error(path, line, "must be a mapping of fields, not " + kind(node));
        }
        return new Section(path, map);
    }

    static String kind(Node node) {
        if (node instanceof MapNode) {
            return "a mapping";
        }
        if (node instanceof ListNode) {
            return "a list";
        }
        Scalar s = (Scalar) node;
        return switch (s.token()) {
            case VALUE_NULL -> "an empty value";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "a number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            default -> "a string";
        };
    }

    static boolean hasWhitespace(String s) {
        return s.chars().anyMatch(Character::isWhitespace);
    }

    static boolean hasLineBreak(String s) {
        return s.indexOf('\r') >= 0 || s.indexOf('\n') >= 0;
    }

    /**
     * The closest allowed name within two edits, for "did you mean" hints; else the one allowed name that
     * {@code name} abbreviates, because long names get shortened ({@code requests_per_min}).
     */
    private static String closest(String name, List<String> allowed) {
        String lower = name.toLowerCase(Locale.ROOT);
        String best = null;
        int bestDistance = 3;
        for (String candidate : allowed) {
            int d = editDistance(lower, candidate);
            if (d < bestDistance) {
                best = candidate;
                bestDistance = d;
            }
        }
        if (best == null && lower.length() >= 4) {
            List<String> longer = allowed.stream().filter(c -> c.startsWith(lower)).toList();
            best = longer.size() == 1 ? longer.get(0) : null;
        }
        return best;
    }

    private static int editDistance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    /**
     * One YAML mapping being bound, with its path. Typed getters return the default (or null) when a
     * field is absent or empty, expand {@code ${...}} in strings, and accept a string for a number
     * or boolean only when it came from an environment reference ({@code ${TIMEOUT:-5000}}).
     */
    final class Section {
        final String path;
        final MapNode node;

        Section(String path, MapNode node) {
            this.path = path;
            this.node = node;
        }

        String pathOf(String name) {
            return path.isEmpty() ? name : path + "." + name;
        }

        /** The line of a field's key, or of this mapping when the field is absent. */
        int lineOf(String name) {
            Field f = node.fields().get(name);
            return f != null ? f.line() : node.line();
        }

        /** The field, or null when absent or written without a value. */
        Field field(String name) {
            Field f = node.fields().get(name);
            return f == null || (f.value() instanceof Scalar s && s.isNull()) ? null : f;
        }

        void allowOnly(List<String> allowed) throws ConfigException {
            for (Field f : node.fields().values()) {
                if (!allowed.contains(f.key())) {
                    String guess = closest(f.key(), allowed);
                    throw error(pathOf(f.key()), f.line(), "unknown field"
                            + (guess == null ? "" : " (did you mean " + guess + "?)")
                            + "; allowed: " + String.join(", ", allowed));
                }
            }
        }

        ConfigException missing(String name) {
            return error(pathOf(name), node.line(), "is required");
        }

        Scalar scalar(String name) throws ConfigException {
            Field f = field(name);
            if (f == null) {
                return null;
            }
            if (!(f.value() instanceof Scalar s)) {
                throw error(pathOf(name), f.line(), "must be a single value, not " + kind(f.value()));
            }
            return s;
        }

        String string(String name) throws ConfigException {
            Scalar s = scalar(name);
            return s == null ? null : expand(s.text(), pathOf(name), lineOf(name));
        }

        String requiredString(String name) throws ConfigException {
            String value = string(name);
            if (value == null) {
                throw missing(name);
            }
            if (value.isEmpty()) {
                throw error(pathOf(name), lineOf(name), "must not be empty");
            }
            return value;
        }

        long integer(String name, long dflt, long min, long max) throws ConfigException {
            Scalar s = scalar(name);
            if (s == null) {
                return dflt;
            }
            String path = pathOf(name);
            int line = lineOf(name);
            long value;
            if (s.token() == JsonToken.VALUE_NUMBER_INT) {
                if (s.number() instanceof BigInteger) {
                    throw error(path, line, "must be between " + min + " and " + max);
                }
                value = s.number().longValue();
            } else if (s.token() == JsonToken.VALUE_STRING
                    && EnvExpander.hasReference(s.text())) {
                try {
                    value = Long.parseLong(expand(s.text(), path, line).strip());
                } catch (NumberFormatException e) {
                    throw error(path, line, "must be a whole number (after environment expansion)");
                }
            } else {
                throw error(path, line, "must be a whole number, not " + kind(s));
            }
            if (value < min || value > max) {
                throw error(path, line, "must be between " + min + " and " + max);
            }
            return value;
        }

        double decimal(String name, double dflt, double min, double max) throws ConfigException {
            Scalar s = scalar(name);
            if (s == null) {
                return dflt;
            }
            String path = pathOf(name);
            int line = lineOf(name);
            double value;
            if (s.number() != null) {
                value = s.number().doubleValue();
            } else if (s.token() == JsonToken.VALUE_STRING
                    && EnvExpander.hasReference(s.text())) {
                try {
                    value = Double.parseDouble(expand(s.text(), path, line).strip());
                } catch (NumberFormatException e) {
                    throw error(path, line, "must be a number (after environment expansion)");
                }
            } else {
                throw error(path, line, "must be a number, not " + kind(s));
            }
            if (!(value >= min && value <= max)) { // also refuses NaN
                throw error(path, line, "must be between " + min + " and " + max);
            }
            return value;
        }

        boolean bool(String name, boolean dflt) throws ConfigException {
            Scalar s = scalar(name);
            if (s == null) {
                return dflt;
            }
            switch (s.token()) {
                case VALUE_TRUE:
                    return true;
                case VALUE_FALSE:
                    return false;
                case VALUE_STRING:
                    if (EnvExpander.hasReference(s.text())) {
                        String v = expand(s.text(), pathOf(name), lineOf(name)).strip().toLowerCase(Locale.ROOT);
                        if (v.equals("true") || v.equals("false")) {
                            return v.equals("true");
                        }
                    }
                    break;
                default:
                    break;
            }
            throw error(pathOf(name), lineOf(name), "must be true or false");
        }

        ListNode list(String name) throws ConfigException {
            Field f = field(name);
            if (f == null) {
                return null;
            }
            if (!(f.value() instanceof ListNode l)) {
                throw error(pathOf(name), f.line(), "must be a list, not " + kind(f.value()));
            }
            return l;
        }

        Section section(String name) throws ConfigException {
            Field f = field(name);
            return f == null ? null : ConfigReader.this.section(f.value(), pathOf(name), f.line());
        }
    }
}
