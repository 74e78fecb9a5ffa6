package io.modelgateway.core.config;

import com.fasterxml.jackson.core.JsonToken;
import io.modelgateway.core.config.YamlTree.Field;
import io.modelgateway.core.config.YamlTree.Scalar;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads prices: a deployment's {@code price} (a mapping of numbers, or the name of an entry of the shipped price file,
 * {@link PriceFile}), and the entries of that file itself, with the same rules. A price is written as numbers in the
 * file: a {@code ${VAR}} reference (or any string) is refused, because a cost that changes with the environment could
 * not be checked where it is read, and budgets are only as good as the prices they add up.
 */
final class PricesSection extends ConfigReader {

    static final List<String> PRICE_FIELDS = List.of("input", "cached_input", "cache_write", "output", "per_request");

    PricesSection(ConfigReader load) {
        super(load);
    }

    /** The {@code price} of a deployment section, or null when it has none. */
    PriceConfig deploymentPrice(Section d) throws ConfigException {
        Field f = d.field("price");
        if (f == null) {
            return null;
        }
        if (f.value() instanceof Scalar s) {
            if (s.token() != JsonToken.VALUE_STRING) {
                throw error(d.pathOf("price"), f.line(), "must be a mapping of prices (input, output, …) or the name"
                        + " of an entry of the shipped price file, not " + kind(s));
            }
            String name = s.text();
            PriceConfig shipped = PriceFile.shipped().get(name);
            if (shipped == null) {
                throw error(d.pathOf("price"), f.line(), "'" + name + "' is not in the shipped price file ("
                        + PriceFile.shipped().asOf() + "); its entries: " + String.join(", ",
                        PriceFile.shipped().names()) + "; or write the prices here as a mapping");
            }
            return shipped;
        }
        return price(d.section("price"), null);
    }

    /** A mapping of prices: {@code input} and {@code output} required, the cache prices default to {@code input}. */
    PriceConfig price(Section p, String name) throws ConfigException {
        p.allowOnly(PRICE_FIELDS);
        double input = number(p, "input", Double.NaN, PriceConfig.MAX_PER_MILLION);
        double output = number(p, "output", Double.NaN, PriceConfig.MAX_PER_MILLION);
        double cachedInput = number(p, "cached_input", input, PriceConfig.MAX_PER_MILLION);
        double cacheWrite = number(p, "cache_write", input, PriceConfig.MAX_PER_MILLION);
        double perRequest = number(p, "per_request", 0, PriceConfig.MAX_PER_REQUEST);
        return new PriceConfig(input, cachedInput, cacheWrite, output, perRequest, name);
    }

    /**
     * A price field: a number from 0 to {@code max} written in the file; absent, {@code dflt} (NaN: required).
     */
    private double number(Section p, String field, double dflt, double max) throws ConfigException {
        Scalar s = p.scalar(field);
        if (s == null) {
            if (Double.isNaN(dflt)) {
                throw p.missing(field);
            }
            return dflt;
        }
        if (s.token() != JsonToken.VALUE_NUMBER_INT && s.token() != JsonToken.VALUE_NUMBER_FLOAT) {
            throw error(p.pathOf(field), p.lineOf(field), "must be a number written in the file (USD"
                    + (field.equals("per_request") ? " per request" : " per million tokens") + "), not "
                    + kind(s) + (EnvExpander.hasReference(s.text()) ? "; prices take no ${...} references" : ""));
        }
        double v = s.number().doubleValue();
        if (!(v >= 0 && v <= max)) {
            throw error(p.pathOf(field), p.lineOf(field), "must be between 0 and " + (long) max);
        }
        return v;
    }

    /** The entries of a price file's {@code prices} mapping, by name, in file order. */
    Map<String, PriceConfig> entries(Section top) throws ConfigException {
        Section all = top.section("prices");
        if (all == null) {
            throw top.missing("prices");
        }
        Map<String, PriceConfig> prices = new LinkedHashMap<>();
        for (Field f : all.node.fields().values()) {
            String name = f.key();
            if (name.isEmpty() || hasWhitespace(name)) {
                throw error(all.pathOf(name), f.line(), "a name must be non-empty and contain no whitespace");
            }
            prices.put(name, price(section(f.value(), all.pathOf(name), f.line()), name));
        }
        return prices;
    }
}
