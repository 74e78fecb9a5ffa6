package io.modelgateway.core.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.modelgateway.core.config.TlsConfig;
import io.modelgateway.core.testing.Cli;
import io.modelgateway.core.testing.TestCertificates;
import io.modelgateway.core.testing.TestGateway;
import io.netty.handler.ssl.SslContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reading the PEM files of a listener ({@link PemCredentials}, {@link ServerTls}) with files openssl wrote (an
 * encrypted PKCS#8 key, a traditional-format key), and the JDK provider as the fallback serving h2 and HTTP/1.1 to
 * curl.
 */
class ServerTlsTest {
    @TempDir
    Path dir;

    private Path openssl(String name, String... args) throws Exception {
        Cli.Result r = Cli.run(List.of(args), null, 30);
        assertThat(r.exit()).as(r.toString()).isZero();
        return dir.resolve(name);
    }

    @Test
    void encryptedPkcs8Key_opensWithItsPassword_wrongOrMissingPasswordIsRefusedWithoutSecrets() throws Exception {
        TestCertificates certs = TestCertificates.newAuthority(dir, "pem");
        Path[] files = certs.writeServer("pem.test");
        Path enc = openssl("enc.key", "openssl", "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", files[1].toString(),
                "-out", dir.resolve("enc.key").toString(), "-passout", "pass:s3cret-pw");
        byte[] cert = Files.readAllBytes(files[0]);
        byte[] key = Files.readAllBytes(enc);
        assertThat(new String(key, StandardCharsets.US_ASCII)).contains("BEGIN ENCRYPTED PRIVATE KEY");
        PemCredentials ok = PemCredentials.read(cert, key, "s3cret-pw");
        assertThat(ok.leaf().getSubjectX500Principal().getName()).isEqualTo("CN=pem.test");
        assertThatThrownBy(() -> PemCredentials.read(cert, key, "wrong"))
                .isInstanceOf(PemCredentials.Invalid.class).hasMessageContaining("key_password does not open")
                .hasMessageNotContaining("wrong");
        assertThatThrownBy(() -> PemCredentials.read(cert, key, null))
                .hasMessage("key_file holds an encrypted key: set key_password");
        // Served: ServerTls builds a context from the encrypted key.
        ServerTls tls = ServerTls.start(new TlsConfig(files[0], enc, "s3cret-pw", "tls"), true);
        assertThat(tls.certificate().getSubjectX500Principal().getName()).isEqualTo("CN=pem.test");
    }

    @Test
    void traditionalFormat_keyOfAnotherCertificate_noPem_refusedWithWhatToDo() throws Exception {
        TestCertificates certs = TestCertificates.newAuthority(dir, "pem");
        Path[] files = certs.writeServer("pem.test");
        Path[] other = certs.write(certs.issueServer("other.test"), "other");
        Path traditional = openssl("ec.key", "openssl", "ec", "-in", files[1].toString(), "-out",
                dir.resolve("ec.key").toString());
        byte[] cert = Files.readAllBytes(files[0]);
        assertThatThrownBy(() -> PemCredentials.read(cert, Files.readAllBytes(traditional), null))
                .hasMessageStartingWith("key_file holds a EC key in its traditional format; convert it to PKCS#8");
        assertThatThrownBy(() -> PemCredentials.read(cert, Files.readAllBytes(other[1]), null))
                .hasMessage("the key in key_file is not the key of the first certificate in cert_file");
        assertThatThrownBy(() -> PemCredentials.read("nothing".getBytes(StandardCharsets.US_ASCII),
                Files.readAllBytes(files[1]), null))
                .hasMessage("cert_file holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
        assertThatThrownBy(() -> ServerTls.start(new TlsConfig(files[0], other[1], null, "admin.tls"), false))
                .isInstanceOf(IllegalStateException.class).hasMessageStartingWith("admin.tls: the key in key_file");
    }

    @Test
    void clientCaFile_rotatedWithThePair_aFileWithoutACaIsRefusedAndTheOldContextStays() throws Exception {
        TestCertificates certs = TestCertificates.newAuthority(dir, "mtls");
        Path[] files = certs.writeServer("mtls.test");
        Path clientCa = dir.resolve("clients.pem");
        Files.copy(certs.caFile(), clientCa);
        ServerTls tls = ServerTls.start(new TlsConfig(files[0], files[1], null, clientCa, true, "tls"), true);
        SslContext first = tls.context();
        assertThat(tls.describe()).contains("client certificates required");

        Path otherDir = Files.createDirectories(dir.resolve("other"));
        TestCertificates other = TestCertificates.newAuthority(otherDir, "other");
        Files.writeString(clientCa, Files.readString(certs.caFile()) + Files.readString(other.caFile()));
        assertThat(tls.check()).as("a second authority added: a new context").isTrue();
        SslContext second = tls.context();
        assertThat(second).isNotSameAs(first);

        Files.writeString(clientCa, Files.readString(files[0])); // a server's leaf, not an authority
        assertThat(tls.check()).isFalse();
        assertThat(tls.context()).isSameAs(second);
        Files.writeString(clientCa, "nothing");
        assertThat(tls.check()).isFalse();
        assertThat(tls.context()).isSameAs(second);
        assertThatThrownBy(() -> ServerTls.clientCas("nothing".getBytes(StandardCharsets.US_ASCII)))
                .hasMessage("client_ca_file holds something that is not a PEM certificate");
        assertThatThrownBy(() -> ServerTls.clientCas(new byte[0])).hasMessage("client_ca_file holds no certificate");
    }

    @Test
    void jdkProviderFallback_servesH2AndHttp11() throws Exception {
        TestCertificates certs = TestCertificates.newAuthority(dir, "jdk");
        Path[] files = certs.writeServer("jdk.test");
        System.setProperty(ServerTls.PROVIDER_PROPERTY, "jdk");
        TestGateway gw;
        try {
            gw = TestGateway.start(TestCertificates.tlsBlock(files, "") + TestGateway.simulatorConfig());
        } finally {
            System.clearProperty(ServerTls.PROVIDER_PROPERTY);
        }
        try (gw) {
            assertThat(gw.server().tls().providerName()).isEqualTo("JDK");
            for (String protocol : new String[] {"--http2", "--http1.1"}) {
                Cli.Result r = Cli.run(List.of("curl", "-sS", "--max-time", "20", protocol, "--cacert",
                        certs.caFile().toString(), "-w", "%{http_version} %{http_code}", "-o", "/dev/null",
                        gw.url("/health")), null, 30);
                assertThat(r.out()).as(r.toString()).isEqualTo(protocol.equals("--http2") ? "2 200" : "1.1 200");
            }
        }
    }
}
