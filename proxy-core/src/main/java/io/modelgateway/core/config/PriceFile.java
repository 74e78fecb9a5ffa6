package io.modelgateway.core.config;

import io.modelgateway.core.config.YamlTree.Node;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * The price file shipped in the jar ({@value #RESOURCE}): public list prices of common models, dated, each taken from
 * its provider's pricing page (the file's header says which page and when). A deployment includes one by name
 * ({@code price: claude-sonnet-4-5}) instead of writing the numbers. Read once, checked like a config; immutable.
 *
 * @param asOf   the date the prices were read from the providers' pages ({@code as_of} in the file)
 * @param prices by name (the provider's own model id), in file order
 */
public record PriceFile(String asOf, Map<String, PriceConfig> prices) {
    public static final String RESOURCE = "/io/modelgateway/core/config/prices.yaml";

    private static final List<String> TOP_FIELDS = List.of("as_of", "prices");

    private static final class Shipped {
        static final PriceFile FILE = load();
    }

    public PriceFile {
        prices = Map.copyOf(prices);
    }

    /** The file in the jar; loaded on first use (a config without a named price never reads it). */
    public static PriceFile shipped() {
        return Shipped.FILE;
    }

    public PriceConfig get(String name) {
        return prices.get(name);
    }

    /** The names, sorted (for messages). */
    public List<String> names() {
        return prices.keySet().stream().sorted().toList();
    }

    private static PriceFile load() {
        String yaml;
        try (InputStream in = PriceFile.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("the price file is missing from the jar: " + RESOURCE);
            }
            yaml = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + RESOURCE, e);
        }
        try {
            return parse(yaml, "prices.yaml (shipped)");
        } catch (ConfigException e) {
            throw new IllegalStateException("the shipped price file is broken: " + e.getMessage(), e);
        }
    }

    /** A price file from its text; {@code source} names it in messages. */
    static PriceFile parse(String yaml, String source) throws ConfigException {
        Node root = YamlTree.read(yaml, source);
        PricesSection reader = new PricesSection(new ConfigReader(source, Map.of()));
        ConfigReader.Section top = reader.section(root, "", 1);
        top.allowOnly(TOP_FIELDS);
        String asOf = top.requiredString("as_of");
        return new PriceFile(asOf, reader.entries(top));
    }
}
