package io.modelgateway.core.server;

import io.modelgateway.core.config.ServerConfig;
import io.netty.channel.Channel;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The caps on client connections of one server: the total ({@code server.max_connections}, or when it is not set a
 * cap derived at start from the process's file-descriptor limit) and the per-address one
 * ({@code server.max_connections_per_client}). Checked once per accepted connection, never per request.
 *
 * <p>Why derive a cap: with none, a client opening sockets without end runs the process out of file descriptors,
 * and then the gateway can open neither an upstream connection nor its log. Each client connection may hold an
 * upstream connection too (in use, or idle in the pool after its exchange), so the derived cap is half of what the
 * limit leaves after a {@link #RESERVE} for the rest (JVM files, event-loop descriptors, the listeners, the access
 * log, DNS). On Linux the JVM raises its soft limit to the hard one at start; the limit read here is the one that
 * applies to the running process.
 */
public final class ConnectionCaps {
    /** Descriptors kept out of the derived cap (at most a quarter of a small limit). */
    static final int RESERVE = 256;
    static final int MAX = 1_000_000;

    private volatile int derived;
    private volatile long fileDescriptorLimit = -1;
    /** Open connections per client address; only kept while a per-client cap is configured. */
    private final ConcurrentHashMap<InetAddress, Integer> perClient = new ConcurrentHashMap<>();

    /**
     * The cap derived from a file-descriptor limit: (limit − reserve) / 2, between 1 and {@link #MAX}; 0 (no cap)
     * when the limit is not known.
     */
    static int derive(long fdLimit) {
        if (fdLimit <= 0) {
            return 0;
        }
        long reserve = Math.min(RESERVE, fdLimit / 4);
        return (int) Math.max(1, Math.min(MAX, (fdLimit - reserve) / 2));
    }

    /** The process's soft {@code RLIMIT_NOFILE}, or -1 where the platform does not tell. */
    static long readFileDescriptorLimit() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
            return unix.getMaxFileDescriptorCount();
        }
        return -1;
    }

    /** Reads the file-descriptor limit and derives the cap used while {@code max_connections} is not set. */
    public void deriveFromProcess() {
        deriveFrom(readFileDescriptorLimit());
    }

    void deriveFrom(long fdLimit) {
        fileDescriptorLimit = fdLimit;
        derived = derive(fdLimit);
    }

    /** The total cap in force under {@code server}: its own, or the derived one; 0 = none. */
    public int maxConnections(ServerConfig server) {
        return server.maxConnections() == ServerConfig.DERIVED ? derived : server.maxConnections();
    }

    /** One line for the start-up log: the caps in force and where they come from. */
    public String describe(ServerConfig server) {
        String total;
        if (server.maxConnections() > 0) {
            total = server.maxConnections() + " (server.max_connections)";
        } else if (server.maxConnections() == 0) {
            total = "none (server.max_connections: 0)";
        } else if (derived > 0) {
            total = derived + ", derived from the file-descriptor limit " + fileDescriptorLimit + ": (" + fileDescriptorLimit
                    + " - " + Math.min(RESERVE, fileDescriptorLimit / 4) + " reserved) / 2, as each client connection"
                    + " may also hold an upstream one (set server.max_connections to choose)";
        } else {
            total = "none (the file-descriptor limit is not known on this platform; set server.max_connections)";
        }
        int perClientCap = server.maxConnectionsPerClient();
        return "connection cap: " + total + "; per client address: "
                + (perClientCap > 0 ? perClientCap : "none");
    }

    /**
     * Counts {@code ch} against its client address's cap ({@code max}; 0 = none, then nothing is counted): false
     * when that address already has {@code max} connections open. A counted connection is uncounted when it closes.
     */
    boolean admitFromClient(Channel ch, int max) {
        if (max <= 0 || !(ch.remoteAddress() instanceof InetSocketAddress remote) || remote.getAddress() == null) {
            return true;
        }
        InetAddress ip = remote.getAddress();
        boolean[] admitted = new boolean[1];
        perClient.compute(ip, (k, open) -> {
            int n = open == null ? 0 : open;
            if (n >= max) {
                return open;
            }
            admitted[0] = true;
            return n + 1;
        });
        if (admitted[0]) {
            ch.closeFuture().addListener(f -> perClient.computeIfPresent(ip, (k, open) -> open <= 1 ? null : open - 1));
        }
        return admitted[0];
    }

    /** Connections counted for {@code ip} now (tests). */
    int openFrom(InetAddress ip) {
        Integer n = perClient.get(ip);
        return n == null ? 0 : n;
    }
}
