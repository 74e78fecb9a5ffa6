package io.modelgateway.core.config;

import io.netty.util.NetUtil;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A listen address: an IPv4 literal, an IPv6 literal (written {@code [::1]:8080}, stored without
 * the brackets) or a host name, and a port (0 asks the OS for a free one, which tests use).
 * Nothing here resolves names: {@link #isLoopback()} decides from the text alone, so it never blocks.
 */
public record HostAndPort(String host, int port) {

    private static final Pattern HOST_NAME =
            Pattern.compile("[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\\.?");

    public HostAndPort {
        Objects.requireNonNull(host, "host");
        if (host.isEmpty()) {
            throw new IllegalArgumentException("host must not be empty");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be 0..65535");
        }
    }

    /**
     * Parses {@code host:port} or {@code [v6]:port}.
     *
     * @throws IllegalArgumentException saying what is wrong, for a message after the field path
     */
    public static HostAndPort parse(String s) {
        String text = s == null ? "" : s.trim();
        if (text.isEmpty()) {
            throw new IllegalArgumentException("expected host:port, e.g. 127.0.0.1:8080");
        }
        String host;
        String portText;
        if (text.startsWith("[")) {
            int close = text.indexOf(']');
            if (close < 0 || close + 1 >= text.length() || text.charAt(close + 1) != ':') {
                throw new IllegalArgumentException("expected [ipv6]:port, e.g. [::1]:8080");
            }
            host = text.substring(1, close);
            portText = text.substring(close + 2);
            if (!NetUtil.isValidIpV6Address(host)) {
                throw new IllegalArgumentException("'" + host + "' is not an IPv6 address");
            }
        } else {
            int colon = text.lastIndexOf(':');
            if (colon < 0) {
                throw new IllegalArgumentException("expected host:port, e.g. 127.0.0.1:8080");
            }
            host = text.substring(0, colon);
            portText = text.substring(colon + 1);
            if (host.indexOf(':') >= 0) {
                throw new IllegalArgumentException("write an IPv6 address in brackets, e.g. [::1]:8080");
            }
            if (host.isEmpty()) {
                throw new IllegalArgumentException("the host is missing; use 0.0.0.0:PORT for all interfaces");
            }
            boolean dotted = host.chars().allMatch(c -> c == '.' || (c >= '0' && c <= '9'));
            if (dotted ? !NetUtil.isValidIpV4Address(host) : !HOST_NAME.matcher(host).matches()) {
                throw new IllegalArgumentException("'" + host + "' is not an IP address or host name");
            }
        }
        return new HostAndPort(host, parsePort(portText));
    }

    private static int parsePort(String text) {
        if (text.isEmpty() || text.length() > 5 || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IllegalArgumentException("the port must be a number 0..65535");
        }
        int port = Integer.parseInt(text);
        if (port > 65535) {
            throw new IllegalArgumentException("the port must be a number 0..65535");
        }
        return port;
    }

    /**
     * True for {@code localhost}, 127.0.0.0/8, {@code ::1} and IPv4-mapped 127.x. Decided from the
     * text only: a name other than localhost counts as reachable from outside.
     */
    public boolean isLoopback() {
        String h = host.toLowerCase(Locale.ROOT);
        if (h.equals("localhost") || h.equals("localhost.")) {
            return true;
        }
        byte[] ip = NetUtil.createByteArrayFromIpAddressString(host);
        if (ip == null) {
            return false;
        }
        if (ip.length == 4) {
            return ip[0] == 127;
        }
        for (int i = 0; i < 10; i++) {
            if (ip[i] != 0) {
                return false;
            }
        }
        if (ip[10] == 0 && ip[11] == 0) { // ::1 (and not ::, which is every interface)
            for (int i = 12; i < 15; i++) {
                if (ip[i] != 0) {
                    return false;
                }
            }
            return ip[15] == 1;
        }
        return ip[10] == (byte) 0xff && ip[11] == (byte) 0xff && ip[12] == 127; // ::ffff:127.x.y.z
    }

    @Override
    public String toString() {
        return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
    }
}
