package io.modelgateway.core.testing;

import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * A test certificate authority and server certificates it issues for {@code localhost} and {@code 127.0.0.1}, made
 * in memory by Netty's test PKI builder and written as PEM files into a directory the test owns: nothing with a
 * private key is committed. The CA file is what a client is told to trust ({@code curl --cacert},
 * {@code NODE_EXTRA_CA_CERTS}, a provider's {@code ca_file}).
 */
public final class TestCertificates {
    private final X509Bundle ca;
    private final Path dir;

    private TestCertificates(X509Bundle ca, Path dir) {
        this.ca = ca;
        this.dir = dir;
    }

    /** A new CA whose files go into {@code dir}; {@link #caFile()} is written at once. */
    public static TestCertificates newAuthority(Path dir, String name) throws Exception {
        Instant now = Instant.now();
        X509Bundle ca = new CertificateBuilder()
                .subject("CN=" + name + " Test CA")
                .setIsCertificateAuthority(true)
                .ecp256()
                .notBefore(now.minus(1, ChronoUnit.HOURS))
                .notAfter(now.plus(1, ChronoUnit.DAYS))
                .buildSelfSigned();
        TestCertificates certs = new TestCertificates(ca, dir);
        Files.writeString(certs.caFile(), ca.getCertificatePEM(), StandardCharsets.US_ASCII);
        return certs;
    }

    /** The authority itself (to issue other certificates with {@code CertificateBuilder.buildIssuedBy}). */
    public X509Bundle authority() {
        return ca;
    }

    public Path caFile() {
        return dir.resolve("ca.pem");
    }

    /** A server certificate for localhost and 127.0.0.1 issued by this CA. */
    public X509Bundle issueServer(String commonName) throws Exception {
        Instant now = Instant.now();
        return new CertificateBuilder()
                .subject("CN=" + commonName)
                .addSanDnsName("localhost")
                .addSanIpAddress("127.0.0.1")
                .ecp256()
                .addExtendedKeyUsageServerAuth()
                .notBefore(now.minus(1, ChronoUnit.HOURS))
                .notAfter(now.plus(1, ChronoUnit.DAYS))
                .buildIssuedBy(ca);
    }

    /** A client certificate with {@code subject} (e.g. {@code CN=billing,O=Example}) issued by this CA. */
    public X509Bundle issueClient(String subject) throws Exception {
        Instant now = Instant.now();
        return new CertificateBuilder()
                .subject(subject)
                .ecp256()
                .addExtendedKeyUsage(CertificateBuilder.ExtendedKeyUsage.PKIX_KP_CLIENT_AUTH)
                .notBefore(now.minus(1, ChronoUnit.HOURS))
                .notAfter(now.plus(1, ChronoUnit.DAYS))
                .buildIssuedBy(ca);
    }

    /** Writes {@code cert} (its chain without the root) and its PKCS#8 key to {@code <stem>.crt} / {@code <stem>.key}. */
    public Path[] write(X509Bundle cert, String stem) throws IOException {
        Path crt = dir.resolve(stem + ".crt");
        Path key = dir.resolve(stem + ".key");
        Files.writeString(crt, cert.getCertificatePEM(), StandardCharsets.US_ASCII);
        Files.writeString(key, cert.getPrivateKeyPEM(), StandardCharsets.US_ASCII);
        return new Path[] {crt, key};
    }

    /** A new server certificate written to {@code server.crt} / {@code server.key}. */
    public Path[] writeServer(String commonName) throws Exception {
        return write(issueServer(commonName), "server");
    }

    /** The YAML block {@code tls:} naming {@code files} (cert, key), indented by {@code indent}. */
    public static String tlsBlock(Path[] files, String indent) {
        return indent + "tls:\n" + indent + "  cert_file: " + files[0] + "\n" + indent + "  key_file: " + files[1]
                + "\n";
    }
}
