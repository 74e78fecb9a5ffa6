package io.modelgateway.core.config;

import io.modelgateway.core.config.EnvExpander.UnsetVariableException;
import io.modelgateway.core.config.YamlTree.ListNode;
import io.modelgateway.core.config.YamlTree.Node;
import io.modelgateway.core.config.YamlTree.Scalar;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import javax.security.auth.x500.X500Principal;

/**
 * Reads {@code keys}: each entry, with its key (an environment reference or a {@code sha256:} hash), its model
 * patterns and its limits, into a {@link KeyConfig}. An optional key whose variable is unset is skipped; the
 * {@code development_key} fallback, when no entry has a key, is {@link ConfigLoader}'s.
 */
final class KeysSection extends ConfigReader {

    private static final List<String> KEY_FIELDS =
            List.of("name", "key", "optional", "models", "limits", "model_limits", "rate_limit_headers",
                    "budget_usd", "cost_header", "client_cert_subject");
    private static final List<String> BUDGET_FIELDS = List.of("daily", "monthly");
    private static final Pattern SHA256_HEX = Pattern.compile("[0-9A-Fa-f]{64}");

    private final LimitsSection limitsSection = new LimitsSection(this);

    KeysSection(ConfigReader load) {
        super(load);
    }

    /** @param clientCerts the API listener asks for client certificates ({@code tls.client_ca_file}) */
    List<KeyConfig> keys(Section top, Map<String, ModelConfig> models, boolean clientCerts) throws ConfigException {
        List<KeyConfig> keys = new ArrayList<>();
        List<String> keyPaths = new ArrayList<>(); // parallel to keys, for "same key as" messages
        Map<String, Integer> names = new HashMap<>(); // also holds skipped keys: names stay unique
        ListNode list = top.list("keys");
        for (int i = 0; list != null && i < list.items().size(); i++) {
            Node item = list.items().get(i);
            Section k = section(item, "keys[" + i + "]", item.line());
            k.allowOnly(KEY_FIELDS);
            String name = k.requiredString("name");
            if (!NAME.matcher(name).matches()) {
                throw error(k.pathOf("name"), k.lineOf("name"), "may use only letters, digits, '_', '.' and '-'");
            }
            Integer other = names.putIfAbsent(name, i);
            if (other != null) {
                throw error(k.pathOf("name"), k.lineOf("name"), "duplicate key name '" + name
                        + "' (also keys[" + other + "])");
            }
            boolean optional = k.bool("optional", false);
            List<String> patterns = modelPatterns(k, models);
            // Checked before the key itself, so a skipped optional key's limits are still validated.
            LimitsConfig limits = limitsSection.limits(k, "limits");
            Map<String, LimitsConfig> modelLimits = limitsSection.modelLimits(k, patterns, models);
            boolean rateLimitHeaders = k.bool("rate_limit_headers", true);
            BudgetConfig budget = budget(k, patterns, models);
            boolean costHeader = k.bool("cost_header", false);
            X500Principal subject = clientCertSubject(k, clientCerts);
            byte[] hash = keyHash(k, name, optional);
            if (hash == null) {
                continue;
            }
            for (int j = 0; j < keys.size(); j++) {
                if (keys.get(j).matches(hash)) {
                    throw error(k.pathOf("key"), k.lineOf("key"), "the same key as " + keyPaths.get(j)
                            + "; every entry needs its own key");
                }
            }
            keys.add(new KeyConfig(name, hash, patterns, false, limits, modelLimits, rateLimitHeaders, budget,
                    costHeader, subject));
            keyPaths.add(k.pathOf("key"));
        }
        return keys;
    }

    /**
     * {@code client_cert_subject}: the distinguished name (RFC 4514, e.g. {@code CN=billing,O=Example}) of the client
     * certificate this key must come with; compared as names (case and spacing of the attribute types do not matter).
     * Only with {@code tls.client_ca_file}, which is what makes the connection's certificate one the gateway checked.
     */
    private X500Principal clientCertSubject(Section k, boolean clientCerts) throws ConfigException {
        String subject = k.string("client_cert_subject");
        if (subject == null) {
            return null;
        }
        if (!clientCerts) {
            throw error(k.pathOf("client_cert_subject"), k.lineOf("client_cert_subject"), "needs tls.client_ca_file:"
                    + " without it the listener asks for no client certificate");
        }
        try {
            X500Principal p = new X500Principal(subject);
            if (p.getName().isEmpty()) {
                throw new IllegalArgumentException("empty");
            }
            return p;
        } catch (IllegalArgumentException e) {
            throw error(k.pathOf("client_cert_subject"), k.lineOf("client_cert_subject"), "is not a distinguished name"
                    + " such as CN=billing,O=Example");
        }
    }

    /**
     * {@code budget_usd}: {@code daily} and {@code monthly} spend in US dollars, numbers written in the file (like
     * prices, no {@code ${VAR}}); each optional, but a written one must be positive. A budget over models none of
     * whose deployments has a price would never count anything: a warning says so.
     */
    private BudgetConfig budget(Section k, List<String> patterns, Map<String, ModelConfig> models)
            throws ConfigException {
        Section b = k.section("budget_usd");
        if (b == null) {
            return BudgetConfig.NONE;
        }
        b.allowOnly(BUDGET_FIELDS);
        BudgetConfig budget = new BudgetConfig(usd(b, "daily"), usd(b, "monthly"));
        if (budget.isEmpty()) {
            throw error(k.pathOf("budget_usd"), k.lineOf("budget_usd"), "needs daily, monthly or both;"
                    + " leave budget_usd out for no budget");
        }
        boolean priced = models.values().stream().anyMatch(m -> m.priced()
                && patterns.stream().anyMatch(p -> Glob.matches(p, m.name())));
        if (!priced) {
            warn(k.pathOf("budget_usd"), k.lineOf("budget_usd"), "no deployment of the models this key may use has a"
                    + " price, so nothing counts against this budget");
        }
        return budget;
    }

    private double usd(Section b, String field) throws ConfigException {
        YamlTree.Scalar s = b.scalar(field);
        if (s == null) {
            return 0;
        }
        if (s.token() != com.fasterxml.jackson.core.JsonToken.VALUE_NUMBER_INT
                && s.token() != com.fasterxml.jackson.core.JsonToken.VALUE_NUMBER_FLOAT) {
            throw error(b.pathOf(field), b.lineOf(field), "must be a number of US dollars written in the file, not "
                    + kind(s) + (EnvExpander.hasReference(s.text()) ? "; budgets take no ${...} references" : ""));
        }
        double v = s.number().doubleValue();
        if (!(v > 0 && v <= BudgetConfig.MAX_USD)) {
            throw error(b.pathOf(field), b.lineOf(field), "must be more than 0 and at most "
                    + (long) BudgetConfig.MAX_USD + "; leave the field out for no budget");
        }
        return v;
    }

    private List<String> modelPatterns(Section k, Map<String, ModelConfig> models) throws ConfigException {
        ListNode list = k.list("models");
        if (list == null) {
            throw k.missing("models");
        }
        if (list.items().isEmpty()) {
            throw error(k.pathOf("models"), k.lineOf("models"), "needs at least one model name or glob, e.g. [\"*\"]");
        }
        List<String> patterns = new ArrayList<>();
        for (int i = 0; i < list.items().size(); i++) {
            Node item = list.items().get(i);
            String path = k.pathOf("models") + "[" + i + "]";
            String pattern = text(item, path);
            if (pattern.isEmpty() || hasWhitespace(pattern)) {
                throw error(path, item.line(), "must be non-empty and contain no whitespace");
            }
            if (!models.isEmpty() && models.keySet().stream().noneMatch(m -> Glob.matches(pattern, m))) {
                warn(path, item.line(), "'" + pattern + "' matches no configured model");
            }
            patterns.add(pattern);
        }
        return patterns;
    }

    /** The key's SHA-256; null when an optional key's variable is unset, which skips the entry. */
    private byte[] keyHash(Section k, String name, boolean optional) throws ConfigException {
        String path = k.pathOf("key");
        int line = k.lineOf("key");
        Scalar raw = k.scalar("key");
        if (raw == null) {
            throw k.missing("key");
        }
        if (EnvExpander.hasReference(raw.text())) {
            String key;
            try {
                key = EnvExpander.expand(raw.text(), env);
            } catch (UnsetVariableException e) {
                if (optional) {
                    warn(path, line, e.describe() + "; optional key '" + name + "' is skipped");
                    return null;
                }
                throw error(path, line, e.describe());
            } catch (IllegalArgumentException e) {
                throw error(path, line, e.getMessage());
            }
            if (key.isEmpty()) {
                if (optional) {
                    warn(path, line, "resolves to an empty key; optional key '" + name + "' is skipped");
                    return null;
                }
                throw error(path, line, "resolves to an empty key");
            }
            if (!key.equals(key.strip())) {
                throw error(path, line, "the key has leading or trailing whitespace");
            }
            return KeyConfig.sha256(key);
        }
        if (raw.text().startsWith("sha256:")) {
            String hex = raw.text().substring("sha256:".length());
            if (!SHA256_HEX.matcher(hex).matches()) {
                throw error(path, line, "a sha256: key needs exactly 64 hex digits after 'sha256:'");
            }
            return HexFormat.of().parseHex(hex);
        }
        throw error(path, line, "a plain key must come from an environment reference such as ${GATEWAY_KEY},"
                + " or be given as sha256:<hex>");
    }
}
