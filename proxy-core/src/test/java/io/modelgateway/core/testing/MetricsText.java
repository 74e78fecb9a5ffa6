package io.modelgateway.core.testing;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The samples of a Prometheus text exposition, for tests that compare what else the gateway shows with it. */
public final class MetricsText {
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)\\})? (\\S+)$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    public record Sample(String name, Map<String, String> labels, double value) {
    }

    private final List<Sample> samples;

    private MetricsText(List<Sample> samples) {
        this.samples = samples;
    }

    public static MetricsText parse(String text) {
        List<Sample> samples = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            Matcher m = SAMPLE.matcher(line);
            if (!m.matches()) {
                throw new AssertionError("not an exposition line: " + line);
            }
            Map<String, String> labels = new LinkedHashMap<>();
            if (m.group(3) != null) {
                Matcher l = LABEL.matcher(m.group(3));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            samples.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(4))));
        }
        return new MetricsText(samples);
    }

    /** The sum of {@code name}'s samples whose labels include all of {@code labels} (name, value pairs). */
    public double sum(String name, String... labels) {
        double s = 0;
        for (Sample sample : samples) {
            if (sample.name().equals(name) && matches(sample, labels)) {
                s += sample.value();
            }
        }
        return s;
    }

    /** The distinct values of {@code label} among {@code name}'s samples. */
    public List<String> values(String name, String label) {
        return samples.stream().filter(s -> s.name().equals(name) && s.labels().containsKey(label))
                .map(s -> s.labels().get(label)).distinct().toList();
    }

    public List<Sample> samples(String name, String... labels) {
        return samples.stream().filter(s -> s.name().equals(name) && matches(s, labels)).toList();
    }

    private static boolean matches(Sample s, String[] labels) {
        for (int i = 0; i + 1 < labels.length; i += 2) {
            if (!labels[i + 1].equals(s.labels().get(labels[i]))) {
                return false;
            }
        }
        return true;
    }
}
