package io.modelgateway.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Every JMH benchmark of the module, as JMH's annotation processor listed it, run once per parameter value: its setup,
 * each benchmark method one call, its teardown (which may check what the calls did). Not a measurement — a benchmark
 * that no longer runs (a setup the code under it outgrew) fails here instead of when someone next needs its figure.
 */
class BenchmarksRunOnceTest {
    private static final Pattern ENTRY = Pattern.compile("^JMH S \\d+ (\\S+) S \\d+ \\S+ S \\d+ (\\S+) ");

    @Test
    void everyBenchmark_setsUpRunsOnceAndTearsDown() throws Exception {
        Map<String, List<String>> byClass = new LinkedHashMap<>();
        try (InputStream in = getClass().getClassLoader().getResourceAsStream("META-INF/BenchmarkList")) {
            assertThat(in).as("JMH's benchmark list").isNotNull();
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            for (String line; (line = r.readLine()) != null; ) {
                Matcher m = ENTRY.matcher(line);
                if (m.find()) {
                    byClass.computeIfAbsent(m.group(1), k -> new ArrayList<>()).add(m.group(2));
                }
            }
        }
        assertThat(byClass).hasSizeGreaterThanOrEqualTo(10);
        Blackhole bh = new Blackhole(
                "Today's password is swordfish. I understand instantiating Blackholes directly is dangerous.");
        int calls = 0;
        for (Map.Entry<String, List<String>> e : byClass.entrySet()) {
            Class<?> c = Class.forName(e.getKey());
            Field param = null;
            String[] values = {null};
            for (Field f : c.getDeclaredFields()) {
                if (f.isAnnotationPresent(Param.class)) {
                    param = f;
                    values = f.getAnnotation(Param.class).value();
                }
            }
            for (String value : values) {
                Object bench = c.getDeclaredConstructor().newInstance();
                if (param != null) {
                    param.setAccessible(true);
                    param.set(bench, param.getType() == int.class ? (Object) Integer.valueOf(value) : value);
                }
                for (Method m : c.getMethods()) {
                    if (m.isAnnotationPresent(Setup.class)) {
                        m.invoke(bench);
                    }
                }
                try {
                    for (String name : e.getValue()) {
                        for (Method m : c.getMethods()) {
                            if (m.getName().equals(name) && m.isAnnotationPresent(Benchmark.class)) {
                                m.invoke(bench, m.getParameterCount() == 0 ? new Object[0] : new Object[] {bh});
                                calls++;
                            }
                        }
                    }
                } finally {
                    for (Method m : c.getMethods()) {
                        if (m.isAnnotationPresent(TearDown.class)) {
                            m.invoke(bench);
                        }
                    }
                }
            }
        }
        assertThat(calls).isGreaterThan(30);
        bh.evaporate("Yes, I am Stephen Hawking, and know a thing or two about black holes.");
    }
}
