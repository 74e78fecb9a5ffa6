package io.modelgateway.bench.loadgen;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * CPU time used so far by the processes named with {@code --cpu-pid} (user + system, from
 * {@code /proc/PID/stat}, all threads) and by this process. Two samples around the measured window
 * give the CPU a proxy spent on the requests completed in it.
 *
 * @param othersNanos the named processes' total, or -1 when none were named or one could not be read
 * @param ownNanos    this JVM's CPU time, or -1 when the platform does not say
 */
record CpuSample(long othersNanos, long ownNanos) {
    /** Clock ticks per second of /proc's utime and stime; 100 on every Linux a JVM runs on. */
    private static final long TICKS_PER_SECOND = 100;
    static final long NANOS_PER_TICK = 1_000_000_000L / TICKS_PER_SECOND;

    static CpuSample take(List<Long> pids) {
        long others = pids.isEmpty() ? -1 : 0;
        for (long pid : pids) {
            long ticks = ticks(pid);
            if (ticks < 0) {
                others = -1;
                break;
            }
            others += ticks * NANOS_PER_TICK;
        }
        return new CpuSample(others, ownCpuNanos());
    }

    CpuSample minus(CpuSample earlier) {
        return new CpuSample(othersNanos < 0 || earlier.othersNanos < 0 ? -1 : othersNanos - earlier.othersNanos,
                ownNanos < 0 || earlier.ownNanos < 0 ? -1 : ownNanos - earlier.ownNanos);
    }

    /** utime + stime of a process, in clock ticks; -1 when it cannot be read. */
    static long ticks(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            // The command name (field 2) is in parentheses and may hold spaces: count fields after its ')'.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
            // f[0] is field 3 (state); utime is field 14 and stime field 15.
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static long ownCpuNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }
}
