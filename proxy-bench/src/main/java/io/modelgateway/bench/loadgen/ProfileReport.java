package io.modelgateway.bench.loadgen;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The report of {@code scripts/bench profile}: per workload, the user and system CPU time per request of nginx and
 * the gateway (from {@code run/profile.tsv}: workload, target, requests, user ticks, system ticks, ticks per second),
 * and what the gateway's CPU profile over the same window says ({@code profile.W.collapsed}, async-profiler's
 * collapsed stacks: frames separated by {@code ;}, a space and the sample count): the shares of kernel code, of the
 * JIT compiler and GC threads, and the hottest frames and packages of user code, by self time.
 */
public final class ProfileReport {
    private static final int TOP_FRAMES = 25;
    private static final int TOP_PACKAGES = 12;

    private ProfileReport() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: ProfileReport RESULTS_DIR");
            System.exit(2);
        }
        System.out.print(render(Path.of(args[0])));
    }

    static String render(Path dir) throws IOException {
        StringBuilder out = new StringBuilder();
        Map<String, StringBuilder> rows = new LinkedHashMap<>();
        for (String line : Files.readAllLines(dir.resolve("run/profile.tsv"))) {
            String[] f = line.split("\t");
            if (f.length < 6) {
                continue;
            }
            long requests = Long.parseLong(f[2]);
            double usPerTick = 1e6 / Double.parseDouble(f[5]);
            double user = requests == 0 ? 0 : Long.parseLong(f[3]) * usPerTick / requests;
            double system = requests == 0 ? 0 : Long.parseLong(f[4]) * usPerTick / requests;
            rows.computeIfAbsent(f[0], k -> new StringBuilder()).append(String.format(Locale.ROOT,
                    "| %s | %d | %.1f | %.1f | %.1f |%n", f[1], requests, user, system, user + system));
        }
        for (Map.Entry<String, StringBuilder> w : rows.entrySet()) {
            out.append(String.format(Locale.ROOT, "%n### %s%n%n| target | requests | user µs/req | system µs/req | "
                    + "total µs/req |%n|---|---:|---:|---:|---:|%n", w.getKey())).append(w.getValue());
            Path collapsed = dir.resolve("profile." + w.getKey() + ".collapsed");
            if (Files.exists(collapsed)) {
                out.append('\n').append(summarize(Files.readAllLines(collapsed)));
            }
        }
        return out.toString();
    }

    /**
     * What one collapsed profile says: the shares by kind of code, then the hottest user frames and packages. Frames
     * may carry async-profiler's type suffix ({@code ann}: {@code _[j]} compiled by C2, {@code _[i]} inlined,
     * {@code _[1]} compiled by C1, {@code _[0]} interpreted, {@code _[k]} kernel): user frames are named without it,
     * and the samples whose own frame is C1 or interpreted code are counted apart: apart from trivial methods (which
     * C1 compiles for good), code the JIT has not finished with — a warm-up too short, or a method sent back by a
     * deoptimization — which a measured round should hold little of.
     */
    static String summarize(List<String> collapsed) {
        long total = 0;
        long kernel = 0;
        long jit = 0;
        long gc = 0;
        long cold = 0;
        Map<String, Long> frames = new TreeMap<>();
        Map<String, Long> packages = new TreeMap<>();
        for (String line : collapsed) {
            int space = line.lastIndexOf(' ');
            if (space < 0) {
                continue;
            }
            long n = Long.parseLong(line.substring(space + 1).trim());
            String stack = line.substring(0, space);
            String leaf = stack.substring(stack.lastIndexOf(';') + 1);
            total += n;
            if (stack.contains("CompileBroker::")) {
                jit += n;
            } else if (stack.contains("GCTaskThread") || stack.contains("WorkerThread::") || stack.contains("VMThread")) {
                gc += n;
            } else if (leaf.endsWith("_[k]")) {
                kernel += n;
            } else {
                if (leaf.endsWith("_[1]") || leaf.endsWith("_[0]")) {
                    cold += n;
                }
                String frame = withoutType(leaf);
                frames.merge(frame, n, Long::sum);
                packages.merge(packageOf(frame), n, Long::sum);
            }
        }
        StringBuilder sb = new StringBuilder();
        if (total == 0) {
            return "The gateway's profile has no samples.\n";
        }
        long all = total;
        long user = total - kernel - jit - gc;
        sb.append(String.format(Locale.ROOT, "The gateway's profile, %d samples: kernel %.1f %%, JIT compiler %.1f %%, GC "
                + "and VM threads %.1f %%, user code %.1f %%.%n%n", total, pct(kernel, total), pct(jit, total),
                pct(gc, total), pct(user, total)));
        sb.append(String.format(Locale.ROOT, "Samples in C1-compiled or interpreted code: %.1f %% (C1 is "
                + "final only for trivial methods such as getters; other code there has not reached C2).%n%n", pct(cold, total)));
        sb.append("| self, % of all samples | hottest user frames |\n|---:|---|\n");
        frames.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(TOP_FRAMES)
                .forEach(e -> sb.append(String.format(Locale.ROOT, "| %.2f | `%s` |%n", pct(e.getValue(), all),
                        e.getKey())));
        sb.append("\n| self, % of all samples | user code by package |\n|---:|---|\n");
        packages.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(TOP_PACKAGES)
                .forEach(e -> sb.append(String.format(Locale.ROOT, "| %.2f | `%s` |%n", pct(e.getValue(), all),
                        e.getKey())));
        return sb.toString();
    }

    /** {@code frame} without async-profiler's type suffix ({@code _[j]}, {@code _[i]}, {@code _[1]}, {@code _[0]}). */
    static String withoutType(String frame) {
        int n = frame.length();
        return n > 4 && frame.charAt(n - 4) == '_' && frame.charAt(n - 3) == '[' && frame.charAt(n - 1) == ']'
                ? frame.substring(0, n - 4) : frame;
    }

    /** The package of a Java frame ({@code io/netty/handler/codec/http/X.m} → {@code io.netty.handler.codec.http}). */
    static String packageOf(String frame) {
        int dot = frame.lastIndexOf('.');
        String cls = dot > 0 && frame.indexOf('/') >= 0 ? frame.substring(0, dot) : null;
        if (cls == null) {
            return "(native: JVM, libc, stubs)";
        }
        int slash = cls.lastIndexOf('/');
        return slash < 0 ? cls : cls.substring(0, slash).replace('/', '.');
    }

    private static double pct(long part, long total) {
        return 100.0 * part / total;
    }
}
