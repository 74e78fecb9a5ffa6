package io.modelgateway.core.config;

import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * How the gateway checks an {@code https} upstream's certificate ({@code ca_file}, {@code insecure_skip_verify} of
 * a provider). Verification (chain and host name) is on unless {@code insecureSkipVerify} says otherwise.
 *
 * @param caFile             the PEM file the trusted authorities were read from, or null for the JDK's default
 *                           trust store
 * @param trusted            the authorities read from {@code caFile} at load (empty without one); a reload reads
 *                           the file again
 * @param insecureSkipVerify trust any certificate for any name (tests, private networks); warned at load
 */
public record UpstreamTls(Path caFile, List<X509Certificate> trusted, boolean insecureSkipVerify) {
    /** The JDK's trust store, verification on. */
    public static final UpstreamTls DEFAULT = new UpstreamTls(null, List.of(), false);

    public UpstreamTls {
        trusted = List.copyOf(trusted);
    }
}
