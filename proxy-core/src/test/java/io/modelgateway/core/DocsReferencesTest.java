package io.modelgateway.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Keeps {@code docs/contract.md} the target of every citation in the repository. The sources, docs, configs and
 * scripts cite decisions as {@code GD-n} and sections as {@code contract N.N} (also lists and ranges:
 * {@code contract 1, 2, 5.10}, {@code contract 8.6–8.8}); each must be defined there, a decision by a
 * {@code | GD-n |} row of its table, a section by a heading starting with its number. No file outside
 * {@code docs/} may point at the contract's old home outside the repository.
 */
class DocsReferencesTest {
    private static final String CONTRACT = "docs/contract.md";
    /** Build output and tool state: not part of the repository. */
    private static final Set<String> SKIPPED_DIRS =
            Set.of(".git", "target", "node_modules", "bench-results", ".idea", ".cifuzz-corpus");
    private static final Pattern CITED_DECISION = Pattern.compile("\\bGD-(\\d+)\\b");
    private static final String NUMBER = "\\d{1,2}(?:\\.\\d{1,2})?";
    private static final Pattern CITED_SECTIONS = Pattern.compile(
            "(?i)\\bcontract\\s+(" + NUMBER + "(?:\\s*(?:,|\u2013|-|/|and)\\s*" + NUMBER + ")*)");
    private static final Pattern NUMBER_OR_DASH = Pattern.compile(NUMBER + "|[\u2013-]");
    private static final Pattern DECISION_ROW = Pattern.compile("(?m)^\\|\\s*GD-(\\d+)\\s*\\|");
    private static final Pattern HEADING = Pattern.compile("(?m)^#{1,6}\\s+(" + NUMBER + ")\\.?\\s");
    /** The old pointers, spelled so that this file does not match them itself. */
    private static final List<String> OUTSIDE_POINTERS = List.of("API-" + "CONTRACT", ".." + "/shared", "/work" + "/shared");

    private static final Path ROOT = repositoryRoot();
    private static final String DESIGN = "docs/design.md";
    private static final Pattern CITED_RULES = Pattern.compile("(?i)\\bdesign rules?\\s+(\\d+(?:\\s*(?:,|\u2013|-|and)\\s*\\d+)*)");
    private static final Pattern RULE = Pattern.compile("(?m)^(\\d+)\\. \\*\\*");

    @Test
    void everyCitedDesignRule_isARuleOfTheDesignPage() throws IOException {
        Set<String> rules = groups(RULE, Files.readString(ROOT.resolve(DESIGN)));
        assertThat(rules).as("numbered rules of " + DESIGN).isNotEmpty();
        List<String> undefined = new ArrayList<>();
        int citations = 0;
        for (Path file : files(DocsReferencesTest::citesReferences)) {
            String[] lines = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                Matcher m = CITED_RULES.matcher(lines[i]);
                while (m.find()) {
                    Matcher n = Pattern.compile("\\d+").matcher(m.group(1));
                    while (n.find()) {
                        citations++;
                        if (!rules.contains(n.group())) {
                            undefined.add(ROOT.relativize(file) + ":" + (i + 1) + ": design rule " + n.group());
                        }
                    }
                }
                if (lines[i].contains("DESIGN" + ".md") && !file.startsWith(ROOT.resolve("docs"))) {
                    undefined.add(ROOT.relativize(file) + ":" + (i + 1) + ": points at a design page outside docs/");
                }
            }
        }
        assertThat(citations).as("the code cites design rules").isPositive();
        assertThat(undefined).isEmpty();
    }

    @Test
    void contract_numbersItsDecisionsWithoutGapsOrRepeats() throws IOException {
        String contract = Files.readString(ROOT.resolve(CONTRACT));
        List<Integer> rows = new ArrayList<>();
        Matcher m = DECISION_ROW.matcher(contract);
        while (m.find()) {
            rows.add(Integer.parseInt(m.group(1)));
        }
        assertThat(rows).as("GD rows of " + CONTRACT).isNotEmpty();
        for (int i = 0; i < rows.size(); i++) {
            assertThat(rows.get(i)).as("row " + (i + 1) + " of the decisions table").isEqualTo(i + 1);
        }
        List<String> headings = new ArrayList<>();
        m = HEADING.matcher(contract);
        while (m.find()) {
            headings.add(m.group(1));
        }
        assertThat(headings).as("numbered headings of " + CONTRACT).isNotEmpty().doesNotHaveDuplicates();
    }

    @Test
    void everyCitedDecisionAndSection_isDefinedInTheContract() throws IOException {
        String contract = Files.readString(ROOT.resolve(CONTRACT));
        Set<String> decisions = groups(DECISION_ROW, contract);
        Set<String> sections = groups(HEADING, contract);
        List<String> undefined = new ArrayList<>();
        int citations = 0;
        for (Path file : files(DocsReferencesTest::citesReferences)) {
            String[] lines = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                String line = lines[i];
                String where = ROOT.relativize(file) + ":" + (i + 1) + ": ";
                Matcher m = CITED_DECISION.matcher(line);
                while (m.find()) {
                    citations++;
                    if (!decisions.contains(m.group(1))) {
                        undefined.add(where + "GD-" + m.group(1) + " has no row in " + CONTRACT);
                    }
                }
                for (String section : citedSections(line)) {
                    citations++;
                    if (!sections.contains(section)) {
                        undefined.add(where + "contract " + section + " has no heading in " + CONTRACT);
                    }
                }
            }
        }
        assertThat(citations).as("citations found under " + ROOT).isPositive();
        assertThat(undefined).withFailMessage("citations without a target:%n%s", String.join("\n", undefined))
                .isEmpty();
    }

    @Test
    void noFile_pointsAtTheContractOutsideTheRepository() throws IOException {
        List<String> stale = new ArrayList<>();
        for (Path file : files(f -> !ROOT.relativize(f).startsWith("docs"))) {
            if (Files.size(file) > 8 << 20) {
                continue;
            }
            String[] lines = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1).split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                for (String pointer : OUTSIDE_POINTERS) {
                    if (lines[i].contains(pointer)) {
                        stale.add(ROOT.relativize(file) + ":" + (i + 1) + ": " + pointer);
                    }
                }
            }
        }
        assertThat(stale).withFailMessage("cite " + CONTRACT + " instead (contract N.N):%n%s", String.join("\n", stale))
                .isEmpty();
    }

    @Test
    void citedSections_readsListsAndRanges() {
        assertThat(citedSections("see contract 7.3.")).containsExactly("7.3");
        assertThat(citedSections("(Contract 1, 2, 5.10, 7): x")).containsExactly("1", "2", "5.10", "7");
        assertThat(citedSections("contract 8.6\u20138.8 golden files")).containsExactly("8.6", "8.7", "8.8");
        assertThat(citedSections("contract 2.1 GD-2, 5.11")).containsExactly("2.1");
        assertThat(citedSections("contract-example, the contract is")).isEmpty();
    }

    /** The section numbers one line cites; a range within one section ({@code 8.6–8.8}) names every step. */
    static List<String> citedSections(String line) {
        List<String> out = new ArrayList<>();
        Matcher m = CITED_SECTIONS.matcher(line);
        while (m.find()) {
            Matcher t = NUMBER_OR_DASH.matcher(m.group(1));
            String previous = null;
            boolean range = false;
            while (t.find()) {
                String token = t.group();
                if (token.equals("-") || token.equals("\u2013")) {
                    range = previous != null;
                    continue;
                }
                if (range) {
                    out.addAll(between(previous, token));
                }
                out.add(token);
                previous = token;
                range = false;
            }
        }
        return out;
    }

    /** The numbers strictly between {@code a} and {@code b} when both are N.x of one N; none otherwise. */
    private static List<String> between(String a, String b) {
        List<String> out = new ArrayList<>();
        int da = a.indexOf('.');
        int db = b.indexOf('.');
        if (da > 0 && db > 0 && a.substring(0, da).equals(b.substring(0, db))) {
            int from = Integer.parseInt(a.substring(da + 1));
            int to = Integer.parseInt(b.substring(db + 1));
            for (int i = from + 1; i < to; i++) {
                out.add(a.substring(0, da) + "." + i);
            }
        }
        return out;
    }

    /** Sources, docs, configs and scripts: where citations are written. */
    private static boolean citesReferences(Path file) {
        String name = file.getFileName().toString();
        Path parent = ROOT.relativize(file).getParent();
        return name.endsWith(".java") || name.endsWith(".md") || name.endsWith(".yaml") || name.endsWith(".yml")
                || name.endsWith(".js") || name.endsWith(".mjs")
                || (parent != null && (parent.toString().equals("scripts") || parent.toString().equals(".ci")));
    }

    /** The repository's regular files that {@code wanted} accepts, in path order; symbolic links not followed. */
    private static List<Path> files(Predicate<Path> wanted) throws IOException {
        List<Path> out = new ArrayList<>();
        Files.walkFileTree(ROOT, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                return SKIPPED_DIRS.contains(dir.getFileName().toString()) && !dir.equals(ROOT)
                        ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                if (attrs.isRegularFile() && !SKIPPED_DIRS.contains(file.getFileName().toString()) && wanted.test(file)) {
                    out.add(file);
                }
                return FileVisitResult.CONTINUE;
            }
        });
        out.sort(null);
        return out;
    }

    private static Set<String> groups(Pattern p, String text) {
        Set<String> out = new TreeSet<>();
        Matcher m = p.matcher(text);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    /** Tests run in the module directory ({@code proxy-core}); the repository root is the parent holding it. */
    private static Path repositoryRoot() {
        for (Path dir = Paths.get("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("pom.xml")) && Files.isRegularFile(dir.resolve("proxy-core/pom.xml"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no repository root above " + Paths.get("").toAbsolutePath());
    }
}
