package io.modelgateway.core.config;

import com.fasterxml.jackson.core.JsonToken;
import io.modelgateway.core.config.YamlTree.Field;
import io.modelgateway.core.config.YamlTree.Node;
import io.modelgateway.core.config.YamlTree.Scalar;
import java.math.BigInteger;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a {@code limits} block (of a model, {@code models.NAME.limits}, or of a key, {@code keys[i].limits}) into a
 * {@link LimitsConfig}, and a key's {@code model_limits} (model name or glob → limits block) into a map of them.
 */
final class LimitsSection extends ConfigReader {

    private static final List<String> LIMIT_FIELDS =
            List.of("requests_per_minute", "tokens_per_minute", "concurrent_requests", "daily_tokens");

    // Upper bounds of the limit fields: far above any real quota, and low enough that a limiter can multiply a
    // per-minute value by the nanoseconds in a minute (6e10) without overflowing a long.
    static final long MAX_REQUESTS_PER_MINUTE = 100_000_000L;
    static final long MAX_TOKENS_PER_MINUTE = 100_000_000L;
    static final long MAX_CONCURRENT_REQUESTS = 1_000_000L;
    static final long MAX_DAILY_TOKENS = 1_000_000_000_000L;

    LimitsSection(ConfigReader load) {
        super(load);
    }

    /** The limits block {@code name} of {@code parent}; absent, empty or {@code {}} means no limits. */
    LimitsConfig limits(Section parent, String name) throws ConfigException {
        Field f = parent.field(name);
        return f == null ? LimitsConfig.NONE : limitsBlock(f.value(), parent.pathOf(name), f.line());
    }

    private LimitsConfig limitsBlock(Node node, String path, int line) throws ConfigException {
        if (node instanceof Scalar s && s.isNull()) {
            return LimitsConfig.NONE;
        }
        Section l = section(node, path, line);
        l.allowOnly(LIMIT_FIELDS);
        return new LimitsConfig(
                limit(l, "requests_per_minute", MAX_REQUESTS_PER_MINUTE),
                limit(l, "tokens_per_minute", MAX_TOKENS_PER_MINUTE),
                (int) limit(l, "concurrent_requests", MAX_CONCURRENT_REQUESTS),
                limit(l, "daily_tokens", MAX_DAILY_TOKENS));
    }

    /**
     * One limit field: absent is 0 (no limit). Written, it must be positive: a written 0 could mean "no limit"
     * or "nothing allowed", and guessing either wrong is costly, so it is refused with the way to say the first.
     */
    private long limit(Section l, String name, long max) throws ConfigException {
        Scalar s = l.scalar(name);
        if (s == null) {
            return 0;
        }
        if (s.token() == JsonToken.VALUE_NUMBER_INT && !(s.number() instanceof BigInteger)
                && s.number().longValue() < 1) {
            throw error(l.pathOf(name), l.lineOf(name), "must be between 1 and " + max
                    + "; leave the field out for no limit");
        }
        return l.integer(name, 0, 1, max);
    }

    /**
     * A key's {@code model_limits}: model name or glob → limits, in config order, because the first
     * matching entry applies (so a narrow entry above {@code "*"} overrides it for those models).
     */
    Map<String, LimitsConfig> modelLimits(Section k, List<String> keyModels, Map<String, ModelConfig> models)
            throws ConfigException {
        Section all = k.section("model_limits");
        if (all == null) {
            return Map.of();
        }
        Map<String, LimitsConfig> limits = new LinkedHashMap<>();
        String catchAll = null;
        for (Field f : all.node.fields().values()) {
            String pattern = f.key();
            String path = all.pathOf(pattern);
            if (pattern.isEmpty() || hasWhitespace(pattern)) {
                throw error(path, f.line(), "a model name or glob must be non-empty and contain no whitespace");
            }
            limits.put(pattern, limitsBlock(f.value(), path, f.line()));
            if (catchAll != null) {
                warn(path, f.line(), "never applies: " + catchAll + " above it matches every model first");
            } else if (!models.isEmpty() && models.keySet().stream().noneMatch(m -> Glob.matches(pattern, m))) {
                warn(path, f.line(), "'" + pattern + "' matches no configured model");
            } else if (!Glob.isGlob(pattern) && keyModels.stream().noneMatch(p -> Glob.matches(p, pattern))) {
                warn(path, f.line(), "never applies: this key may not call '" + pattern + "'");
            }
            if (pattern.equals("*")) {
                catchAll = path;
            }
        }
        return limits;
    }
}
