package io.modelgateway.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The packages of {@code proxy-core} import one way: each may use only the packages of the layers below its own, so
 * no package imports one that imports it back, and reading them bottom up tells the story of a request. The layers,
 * bottom up:
 * <ol>
 *   <li>{@code config}: the immutable config and its loading;</li>
 *   <li>{@code exchange}: what an exchange is (the request, its record and outcome, the response writers, the
 *       exchange and attempt-hook contracts, the failure kinds, the connection signals, the transport);</li>
 *   <li>{@code auth}, {@code limit}, {@code observe}, {@code answer}: the request steps' features, what is seen of
 *       exchanges, and the one answer writer;</li>
 *   <li>{@code upstream}, {@code simulator}: the two kinds of provider, each feeding the answer writer;</li>
 *   <li>{@code route}: resolving the model, planning attempts, retries and fallbacks, starting exchanges;</li>
 *   <li>{@code server}: the bootstrap, the pipeline and the connection handlers;</li>
 *   <li>{@code cli}: the command line.</li>
 * </ol>
 * Every reference counts: imports, and names written out in full anywhere in a file (javadoc links included). Run
 * alone with {@code mvn -pl proxy-core -am verify -Dtest=PackageLayersTest -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class PackageLayersTest {
    private static final List<List<String>> LAYERS = List.of(
            List.of("config"),
            List.of("exchange"),
            List.of("auth", "limit", "observe", "answer"),
            List.of("upstream", "simulator"),
            List.of("route"),
            List.of("server"),
            List.of("cli"));
    private static final String ROOT = "io.modelgateway.core.";
    private static final Pattern REFERENCE = Pattern.compile("\\bio\\.modelgateway\\.core\\.([a-z]+)\\.");

    @Test
    void everyPackage_importsOnlyPackagesOfLowerLayers() throws IOException {
        Map<String, Integer> layer = new TreeMap<>();
        for (int i = 0; i < LAYERS.size(); i++) {
            for (String p : LAYERS.get(i)) {
                layer.put(p, i);
            }
        }
        Path sources = Path.of("src/main/java/io/modelgateway/core");
        List<String> wrong = new ArrayList<>();
        TreeSet<String> packages = new TreeSet<>();
        try (Stream<Path> files = Files.walk(sources)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
                // A feature's sub-packages (limit.shared) belong to its layer: only the first name counts.
                String pkg = sources.relativize(f.getParent()).getName(0).toString();
                packages.add(pkg);
                List<String> lines = Files.readAllLines(f);
                for (int n = 0; n < lines.size(); n++) {
                    String line = lines.get(n);
                    if (line.startsWith("package ")) {
                        continue;
                    }
                    Matcher m = REFERENCE.matcher(line);
                    while (m.find()) {
                        String used = m.group(1);
                        if (used.equals(pkg)) {
                            continue;
                        }
                        Integer from = layer.get(pkg);
                        Integer to = layer.get(used);
                        if (from == null || to == null || to >= from) {
                            wrong.add(sources.relativize(f) + ":" + (n + 1) + ": " + ROOT + pkg + " uses " + ROOT
                                    + used + (from != null && to != null && to.equals(from) ? " (same layer)" : ""));
                        }
                    }
                }
            }
        }
        assertThat(packages).as("every package has its layer").isSubsetOf(layer.keySet());
        assertThat(wrong).as("references that run sideways or back up").isEmpty();
    }
}
