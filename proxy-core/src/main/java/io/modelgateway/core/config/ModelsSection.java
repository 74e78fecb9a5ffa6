package io.modelgateway.core.config;

import io.modelgateway.core.config.YamlTree.Field;
import io.modelgateway.core.config.YamlTree.ListNode;
import io.modelgateway.core.config.YamlTree.Node;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Reads {@code models}: each named model block, with its {@code deployments}, {@code strategy}, {@code retries},
 * {@code fallbacks} and {@code limits}, into a {@link ModelConfig} (with its {@link DeploymentConfig}s and
 * {@link RoutingConfig}); fallbacks are checked against every model once all are read.
 */
final class ModelsSection extends ConfigReader {

    private static final List<String> MODEL_FIELDS = List.of("type", "deployments", "max_output_tokens",
            "no_temperature", "supports_dimensions", "encode_base64", "limits", "strategy", "retries", "fallbacks");
    private static final List<String> RETRY_FIELDS = List.of("max", "backoff_ms", "max_backoff_ms");
    private static final List<String> DEPLOYMENT_FIELDS = List.of("provider", "model", "weight", "price");

    private final LimitsSection limitsSection = new LimitsSection(this);
    private final PricesSection pricesSection = new PricesSection(this);

    ModelsSection(ConfigReader load) {
        super(load);
    }

    Map<String, ModelConfig> models(Section top, Map<String, ProviderConfig> providers)
            throws ConfigException {
        Map<String, ModelConfig> models = new LinkedHashMap<>();
        Map<String, List<Written>> fallbackLines = new HashMap<>(); // model -> where each fallback was written
        Section all = top.section("models");
        if (all == null || all.node.fields().isEmpty()) {
            warn("models", top.lineOf("models"), "no models are configured, so no request can be routed");
            return models;
        }
        for (Field f : all.node.fields().values()) {
            String name = f.key();
            String path = all.pathOf(name);
            if (name.isEmpty() || hasWhitespace(name)) {
                throw error(path, f.line(), "a model name must be non-empty and contain no whitespace");
            }
            Section m = section(f.value(), path, f.line());
            m.allowOnly(MODEL_FIELDS);
            ModelType type = ModelType.CHAT;
            String typeText = m.string("type");
            if (typeText != null) {
                type = switch (typeText) {
                    case "chat" -> ModelType.CHAT;
                    case "embedding" -> ModelType.EMBEDDING;
                    default -> throw error(m.pathOf("type"), m.lineOf("type"),
                            "must be chat or embedding (got '" + typeText + "')");
                };
            }
            ListNode list = m.list("deployments");
            if (list == null) {
                throw m.missing("deployments");
            }
            if (list.items().isEmpty()) {
                throw error(m.pathOf("deployments"), m.lineOf("deployments"), "needs at least one deployment");
            }
            if (list.items().size() > ModelConfig.MAX_DEPLOYMENTS) {
                throw error(m.pathOf("deployments"), m.lineOf("deployments"), "at most "
                        + ModelConfig.MAX_DEPLOYMENTS + " deployments per model");
            }
            List<DeploymentConfig> deployments = new ArrayList<>();
            for (int i = 0; i < list.items().size(); i++) {
                Node item = list.items().get(i);
                Section d = section(item, m.pathOf("deployments") + "[" + i + "]", item.line());
                d.allowOnly(DEPLOYMENT_FIELDS);
                deployments.add(deployment(name, d, providers));
                bedrockDeployment(type, deployments.get(i), d);
            }
            int maxOutputTokens = (int) m.integer("max_output_tokens", 0, 1, 10_000_000);
            boolean noTemperature = m.bool("no_temperature", false);
            boolean supportsDimensions = m.bool("supports_dimensions", false);
            boolean encodeBase64 = m.bool("encode_base64", false);
            if (type != ModelType.EMBEDDING && (m.field("supports_dimensions") != null
                    || m.field("encode_base64") != null)) {
                String field = m.field("supports_dimensions") != null ? "supports_dimensions" : "encode_base64";
                throw error(m.pathOf(field), m.lineOf(field), "only for type embedding");
            }
            LimitsConfig limits = limitsSection.limits(m, "limits");
            RoutingConfig routing = new RoutingConfig(strategy(m), retries(m), fallbackNames(m, name, fallbackLines));
            models.put(name, new ModelConfig(name, type, deployments, maxOutputTokens, noTemperature,
                    supportsDimensions, encodeBase64, limits, routing));
        }
        checkFallbacks(models, fallbackLines);
        return models;
    }

    /** Where a value was written, for messages about it given later. */
    private record Written(String path, int line) {
    }

    private RoutingStrategy strategy(Section m) throws ConfigException {
        String text = m.string("strategy");
        if (text == null) {
            return RoutingStrategy.WEIGHTED;
        }
        RoutingStrategy strategy = RoutingStrategy.fromConfigName(text);
        if (strategy == null) {
            throw error(m.pathOf("strategy"), m.lineOf("strategy"),
                    "must be weighted or least_inflight (got '" + text + "')");
        }
        return strategy;
    }

    /** {@code retries}: absent or empty is {@link RetryConfig#DEFAULT}; each field defaults on its own. */
    private RetryConfig retries(Section m) throws ConfigException {
        Section r = m.section("retries");
        if (r == null) {
            return RetryConfig.DEFAULT;
        }
        r.allowOnly(RETRY_FIELDS);
        RetryConfig d = RetryConfig.DEFAULT;
        int max = (int) r.integer("max", d.max(), 0, RetryConfig.MAX_RETRIES);
        long backoff = r.integer("backoff_ms", d.backoffMs(), 1, RetryConfig.MAX_BACKOFF_MS);
        long maxBackoff = r.integer("max_backoff_ms", Math.max(d.maxBackoffMs(), backoff), 1,
                RetryConfig.MAX_BACKOFF_MS);
        if (maxBackoff < backoff) {
            throw error(r.pathOf("max_backoff_ms"), r.lineOf("max_backoff_ms"), "must be at least backoff_ms ("
                    + backoff + ")");
        }
        return new RetryConfig(max, backoff, maxBackoff);
    }

    /**
     * The names in {@code fallbacks}, checked on their own here (strings, no self, no repeats); that they exist and
     * have the model's type is checked once every model is read, with the lines kept in {@code lines}.
     */
    private List<String> fallbackNames(Section m, String model, Map<String, List<Written>> lines)
            throws ConfigException {
        ListNode list = m.list("fallbacks");
        if (list == null) {
            return List.of();
        }
        List<String> names = new ArrayList<>();
        List<Written> at = new ArrayList<>();
        for (int i = 0; i < list.items().size(); i++) {
            Node item = list.items().get(i);
            String path = m.pathOf("fallbacks") + "[" + i + "]";
            String name = text(item, path);
            if (name.equals(model)) {
                throw error(path, item.line(), "a model cannot fall back to itself");
            }
            if (names.contains(name)) {
                throw error(path, item.line(), "'" + name + "' is listed twice");
            }
            names.add(name);
            at.add(new Written(path, item.line()));
        }
        lines.put(model, at);
        return names;
    }

    private void checkFallbacks(Map<String, ModelConfig> models, Map<String, List<Written>> lines)
            throws ConfigException {
        for (ModelConfig model : models.values()) {
            List<String> names = model.routing().fallbacks();
            for (int i = 0; i < names.size(); i++) {
                Written at = lines.get(model.name()).get(i);
                ModelConfig fallback = models.get(names.get(i));
                if (fallback == null) {
                    throw error(at.path(), at.line(), "unknown model '" + names.get(i) + "'");
                }
                if (fallback.type() != model.type()) {
                    throw error(at.path(), at.line(), "'" + fallback.name() + "' is a "
                            + fallback.type().name().toLowerCase(Locale.ROOT) + " model; a fallback must have the"
                            + " type of the model it stands in for ("
                            + model.type().name().toLowerCase(Locale.ROOT) + ")");
                }
            }
        }
    }

    private DeploymentConfig deployment(String modelName, Section d, Map<String, ProviderConfig> providers)
            throws ConfigException {
        String providerName = d.requiredString("provider");
        ProviderConfig provider = providers.get(providerName);
        if (provider == null) {
            throw error(d.pathOf("provider"), d.lineOf("provider"), "unknown provider '" + providerName + "'; "
                    + (providers.isEmpty() ? "no providers are configured" : "configured: "
                    + String.join(", ", providers.keySet())));
        }
        String upstream = d.string("model");
        if (upstream == null) {
            upstream = modelName;
        } else if (upstream.isEmpty() || hasWhitespace(upstream)) {
            throw error(d.pathOf("model"), d.lineOf("model"), "must be non-empty and contain no whitespace");
        }
        int weight = (int) d.integer("weight", 1, 1, 1_000_000);
        return new DeploymentConfig(provider, upstream, weight, pricesSection.deploymentPrice(d));
    }

    /**
     * A deployment on a bedrock provider: a chat model (a Claude model id, {@code anthropic.…} or with a region
     * prefix such as {@code us.anthropic.…}, is served through InvokeModel with the Messages body; any other through
     * Converse); Bedrock's embedding models are not served yet.
     */
    private void bedrockDeployment(ModelType type, DeploymentConfig deployment, Section d) throws ConfigException {
        if (deployment.provider().type() != ProviderType.BEDROCK) {
            return;
        }
        String path = d.field("model") != null ? d.pathOf("model") : d.pathOf("provider");
        int line = d.field("model") != null ? d.lineOf("model") : d.lineOf("provider");
        if (type != ModelType.CHAT) {
            throw error(path, line, "a bedrock deployment serves chat models only (no embeddings yet)");
        }
    }
}
