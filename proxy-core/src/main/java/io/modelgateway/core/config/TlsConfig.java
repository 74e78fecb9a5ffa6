package io.modelgateway.core.config;

import java.nio.file.Path;
import java.util.Objects;

/**
 * TLS on a listener ({@code tls} beside {@code listen}, or {@code admin.tls}): a PEM certificate chain and its
 * private key. The files are read by the server at start and again whenever they change (certificate rotation);
 * the config only says where they are.
 *
 * @param certFile    the certificate chain, leaf first (certbot's {@code fullchain.pem})
 * @param keyFile     the leaf's private key, PKCS#8 ({@code BEGIN PRIVATE KEY}, or {@code BEGIN ENCRYPTED PRIVATE
 *                    KEY} with {@code keyPassword})
 * @param keyPassword the key's password, or null for an unencrypted key; never printed
 * @param clientCaFile the certificates (PEM) a client certificate must be issued by, or null: no client
 *                    certificate is asked for
 * @param clientCertRequired with {@code clientCaFile}: a connection without a client certificate is refused in the
 *                    handshake ({@code client_auth: require}, the default), or let in ({@code optional}: then only
 *                    keys bound to a certificate subject need one)
 * @param path        where the block is in the config ({@code tls} or {@code admin.tls}), for messages
 */
public record TlsConfig(Path certFile, Path keyFile, String keyPassword, Path clientCaFile, boolean clientCertRequired,
        String path) {

    public TlsConfig {
        Objects.requireNonNull(certFile, "certFile");
        Objects.requireNonNull(keyFile, "keyFile");
        Objects.requireNonNull(path, "path");
    }

    /** Without client certificates. */
    public TlsConfig(Path certFile, Path keyFile, String keyPassword, String path) {
        this(certFile, keyFile, keyPassword, null, false, path);
    }

    /** Without the password. */
    @Override
    public String toString() {
        return "TlsConfig[certFile=" + certFile + ", keyFile=" + keyFile + ", keyPassword="
                + (keyPassword == null ? "none" : "(set)") + ", clientCaFile=" + clientCaFile
                + (clientCaFile == null ? "" : clientCertRequired ? " (required)" : " (optional)") + "]";
    }
}
