package io.modelgateway.core.config;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import javax.security.auth.x500.X500Principal;

/**
 * One gateway key: its name (safe to log), the SHA-256 of the key (the key itself is never kept)
 * and the models it may call. The model patterns are sorted at construction into "any", exact names
 * and globs, so {@link #allowsModel} costs a set lookup in the common cases.
 */
public final class KeyConfig {

    /** Name of the key built from {@code development_key}. */
    public static final String DEVELOPMENT_NAME = "development";

    // Per thread, because MessageDigest is stateful; digest() resets it for the next use.
    private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    });

    private final String name;
    private final byte[] sha256;
    private final List<String> models;
    private final boolean development;
    private final boolean anyModel;
    private final Set<String> exactModels;
    private final String[] modelGlobs;
    private final LimitsConfig limits;
    /** Per-model limits of this key: model name or glob → limits, first match wins (config order). */
    private final java.util.LinkedHashMap<String, LimitsConfig> modelLimits;
    private final boolean rateLimitHeaders;
    private final BudgetConfig budget;
    private final boolean costHeader;
    /** The subject of the client certificate this key must come with, or null: any connection. */
    private final X500Principal clientCertSubject;

    /**
     * @param sha256      the 32-byte SHA-256 of the key; copied
     * @param models      model names or globs ({@code *}, {@code ?}); at least one
     * @param development true only for the key built from {@code development_key}
     */
    public KeyConfig(String name, byte[] sha256, List<String> models, boolean development) {
        this(name, sha256, models, development, LimitsConfig.NONE, java.util.Map.of(), true);
    }

    /**
     * @param limits           limits of everything this key does
     * @param modelLimits      limits of this key on one model: model name or glob → limits; the first matching
     *                         entry (in iteration order) applies
     * @param rateLimitHeaders whether successful responses carry the rate-limit header families (contract
     *                         2.3) when a requests or tokens limit applies
     */
    public KeyConfig(String name, byte[] sha256, List<String> models, boolean development, LimitsConfig limits,
            java.util.Map<String, LimitsConfig> modelLimits, boolean rateLimitHeaders) {
        this(name, sha256, models, development, limits, modelLimits, rateLimitHeaders, BudgetConfig.NONE, false);
    }

    /**
     * @param budget     spend budgets of this key ({@link BudgetConfig#NONE} for none)
     * @param costHeader whether answers whose cost is known before their head carry {@code x-gateway-cost-usd}
     */
    public KeyConfig(String name, byte[] sha256, List<String> models, boolean development, LimitsConfig limits,
            java.util.Map<String, LimitsConfig> modelLimits, boolean rateLimitHeaders, BudgetConfig budget,
            boolean costHeader) {
        this(name, sha256, models, development, limits, modelLimits, rateLimitHeaders, budget, costHeader, null);
    }

    /**
     * @param clientCertSubject the subject a client certificate must have for this key to be accepted (the
     *                          connection's, verified by the listener's {@code tls.client_ca_file}), or null
     */
    public KeyConfig(String name, byte[] sha256, List<String> models, boolean development, LimitsConfig limits,
            java.util.Map<String, LimitsConfig> modelLimits, boolean rateLimitHeaders, BudgetConfig budget,
            boolean costHeader, X500Principal clientCertSubject) {
        this.clientCertSubject = clientCertSubject;
        this.budget = Objects.requireNonNull(budget, "budget");
        this.costHeader = costHeader;
        this.limits = Objects.requireNonNull(limits, "limits");
        this.modelLimits = new java.util.LinkedHashMap<>(modelLimits);
        this.rateLimitHeaders = rateLimitHeaders;
        this.name = Objects.requireNonNull(name, "name");
        if (sha256 == null || sha256.length != 32) {
            throw new IllegalArgumentException("a key hash must be 32 bytes");
        }
        this.sha256 = sha256.clone();
        this.models = List.copyOf(models);
        if (this.models.isEmpty()) {
            throw new IllegalArgumentException("a key needs at least one model pattern");
        }
        this.development = development;
        boolean any = false;
        Set<String> exact = new HashSet<>();
        List<String> globs = new ArrayList<>();
        for (String m : this.models) {
            if (m.equals("*")) {
                any = true;
            } else if (Glob.isGlob(m)) {
                globs.add(m);
            } else {
                exact.add(m);
            }
        }
        this.anyModel = any;
        this.exactModels = Set.copyOf(exact);
        this.modelGlobs = globs.toArray(new String[0]);
    }

    public String name() {
        return name;
    }

    /** True for the key built from {@code development_key}, which only a loopback listener accepts. */
    public boolean development() {
        return development;
    }

    /** The model patterns as configured. */
    public List<String> models() {
        return models;
    }

    /** Limits of everything this key does ({@link LimitsConfig#NONE} when none). */
    public LimitsConfig limits() {
        return limits;
    }

    /** Limits of this key on {@code model} ({@link LimitsConfig#NONE} when none). */
    public LimitsConfig limitsFor(String model) {
        if (modelLimits.isEmpty()) {
            return LimitsConfig.NONE;
        }
        for (java.util.Map.Entry<String, LimitsConfig> e : modelLimits.entrySet()) {
            String p = e.getKey();
            if (p.equals(model) || p.equals("*") || (Glob.isGlob(p) && Glob.matches(p, model))) {
                return e.getValue();
            }
        }
        return LimitsConfig.NONE;
    }

    /** The per-model limits as configured (pattern → limits). */
    public java.util.Map<String, LimitsConfig> modelLimits() {
        return java.util.Collections.unmodifiableMap(modelLimits);
    }

    /** Spend budgets of this key ({@link BudgetConfig#NONE} when none). */
    public BudgetConfig budget() {
        return budget;
    }

    /** Whether answers whose cost is known before their head carry it in {@code x-gateway-cost-usd}. */
    public boolean costHeader() {
        return costHeader;
    }

    /** The client certificate subject this key is bound to, or null. */
    public X500Principal clientCertSubject() {
        return clientCertSubject;
    }

    /** Whether successful responses carry rate-limit headers when a requests or tokens limit applies. */
    public boolean rateLimitHeaders() {
        return rateLimitHeaders;
    }

    public boolean allowsModel(String model) {
        if (anyModel || exactModels.contains(model)) {
            return true;
        }
        for (String glob : modelGlobs) {
            if (Glob.matches(glob, model)) {
                return true;
            }
        }
        return false;
    }

    /** The hash itself, not copied: for {@link KeyIndex} only. */
    byte[] sha256Bytes() {
        return sha256;
    }

    /** Whether {@code sha256} is this key's hash; the comparison takes the same time wherever they differ. */
    public boolean matches(byte[] sha256) {
        return sha256 != null && MessageDigest.isEqual(this.sha256, sha256);
    }

    /** SHA-256 of the key's UTF-8 bytes: what {@link #matches} expects for a key a caller presented. */
    public static byte[] sha256(String key) {
        return SHA256.get().digest(key.getBytes(StandardCharsets.UTF_8));
    }

    /** Name, models and kind only: the hash stays out of logs too. */
    @Override
    public String toString() {
        return "KeyConfig[name=" + name + ", models=" + models + (development ? ", development" : "") + "]";
    }
}
