package io.modelgateway.core.server;

import io.modelgateway.core.config.TlsConfig;
import io.netty.channel.Channel;
import io.netty.handler.codec.http2.Http2SecurityUtil;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.OpenSslContext;
import io.netty.handler.ssl.OpenSslSessionTicketKey;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.SupportedCipherSuiteFilter;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.logging.Logger;
import javax.net.ssl.SSLException;

/**
 * The TLS side of one listener: the server {@link SslContext} made from a {@link TlsConfig}'s PEM files, and its
 * replacement when those files change. TLS 1.3 and 1.2 only, ciphers from the HTTP/2 list (AEAD with forward
 * secrecy), ALPN offering {@code h2} (when HTTP/2 is on) and {@code http/1.1}, resumption by session cache and
 * session tickets. OpenSSL (netty-tcnative's BoringSSL) when it loads, the JDK's TLS otherwise. With a
 * {@code client_ca_file} the handshake asks for a client certificate issued by one of its certificates (required, or
 * optional), and the CA file is rotated like the other two.
 *
 * <p>Rotation: {@link #check()} reads the files (two, or three with a client CA) and, when their bytes changed,
 * builds a new context from them; connections opened after that get it, while open ones keep the context (and
 * session) they started with, so nothing is dropped. A pair that does not make a context (a bad file, a key written before or after its
 * certificate) is refused with one log line and the old context stays; the same bytes are not tried again.
 *
 * <p>Threads: {@link #check()} runs on the reload thread (file I/O, key check); the context is published through a
 * volatile field that event loops read once per accepted connection.
 */
public final class ServerTls {
    private static final Logger LOG = Logger.getLogger(ServerTls.class.getName());
    /** Forces the JDK's TLS even where OpenSSL loads (tests of the fallback): {@code -Dgateway.tls.provider=jdk}. */
    static final String PROVIDER_PROPERTY = "gateway.tls.provider";

    private final TlsConfig config;
    private final boolean http2;
    private final SslProvider provider;
    private volatile SslContext context;
    /** The certificate now served (for the log and tests). */
    private volatile X509Certificate served;
    /** Digest of the file bytes last tried, good or refused: unchanged files are not tried again. Reload thread. */
    private byte[] seen;

    private ServerTls(TlsConfig config, boolean http2, SslProvider provider) {
        this.config = config;
        this.http2 = http2;
        this.provider = provider;
    }

    /**
     * Reads the files and builds the first context.
     *
     * @param http2 offer {@code h2} by ALPN before {@code http/1.1}
     * @throws IllegalStateException naming the config block and what is wrong, when no context can be made
     */
    public static ServerTls start(TlsConfig config, boolean http2) {
        ServerTls tls = new ServerTls(config, http2, pickProvider());
        byte[][] files;
        try {
            files = tls.readFiles();
        } catch (IOException e) {
            throw new IllegalStateException(config.path() + ": cannot read " + e.getMessage());
        }
        try {
            tls.install(files);
        } catch (PemCredentials.Invalid | SSLException e) {
            throw new IllegalStateException(config.path() + ": " + e.getMessage() + " (cert_file " + config.certFile()
                    + ", key_file " + config.keyFile()
                    + (config.clientCaFile() == null ? "" : ", client_ca_file " + config.clientCaFile()) + ")");
        }
        LOG.info(config.path() + ": serving " + tls.describe());
        return tls;
    }

    static SslProvider pickProvider() {
        if ("jdk".equalsIgnoreCase(System.getProperty(PROVIDER_PROPERTY))) {
            return SslProvider.JDK;
        }
        return OpenSsl.isAvailable() && SslProvider.isAlpnSupported(SslProvider.OPENSSL) ? SslProvider.OPENSSL
                : SslProvider.JDK;
    }

    /** The context for connections accepted now. */
    public SslContext context() {
        return context;
    }

    /** The certificate served to connections accepted now. */
    public X509Certificate certificate() {
        return served;
    }

    /** "OpenSSL" or "JDK". */
    public String providerName() {
        return provider == SslProvider.JDK ? "JDK" : "OpenSSL";
    }

    /**
     * A handler for a new connection, from the current context; its handshake must end within
     * {@code handshakeTimeoutMs} or the connection is closed.
     */
    public SslHandler newHandler(Channel ch, long handshakeTimeoutMs) {
        SslHandler handler = context.newHandler(ch.alloc());
        handler.setHandshakeTimeoutMillis(handshakeTimeoutMs);
        return handler;
    }

    /**
     * Looks at the files: when their bytes changed, builds and installs a new context, or logs why not and keeps the
     * old one. Blocking (file I/O): the reload thread only.
     *
     * @return true when a new context was installed
     */
    public synchronized boolean check() {
        byte[][] files;
        try {
            files = readFiles();
        } catch (IOException e) {
            return false; // mid-rotation (a file replaced by rename): the next look sees how it ends
        }
        if (Arrays.equals(digest(files), seen)) {
            return false;
        }
        try {
            install(files);
        } catch (PemCredentials.Invalid | SSLException e) {
            LOG.warning(config.path() + ": certificate reload refused: " + e.getMessage() + "; still serving "
                    + describe());
            return false;
        }
        LOG.info(config.path() + ": certificate reloaded; serving " + describe() + " to new connections");
        return true;
    }

    private byte[][] readFiles() throws IOException {
        if (config.clientCaFile() == null) {
            return new byte[][] {Files.readAllBytes(config.certFile()), Files.readAllBytes(config.keyFile())};
        }
        return new byte[][] {Files.readAllBytes(config.certFile()), Files.readAllBytes(config.keyFile()),
            Files.readAllBytes(config.clientCaFile())};
    }

    private void install(byte[][] files) throws PemCredentials.Invalid, SSLException {
        seen = digest(files); // also when refused below: the same bytes would only be refused again
        PemCredentials credentials = PemCredentials.read(files[0], files[1], config.keyPassword());
        X509Certificate[] clientCas = files.length > 2 ? clientCas(files[2]) : null;
        SslContext next = build(credentials, clientCas);
        served = credentials.leaf();
        context = next;
    }

    /** The certificates of a {@code client_ca_file}: at least one, each a certificate authority's. */
    static X509Certificate[] clientCas(byte[] pem) throws PemCredentials.Invalid {
        List<X509Certificate> cas = new ArrayList<>();
        try {
            for (java.security.cert.Certificate c : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(pem))) {
                cas.add((X509Certificate) c);
            }
        } catch (CertificateException e) {
            throw new PemCredentials.Invalid("client_ca_file holds something that is not a PEM certificate");
        }
        if (cas.isEmpty()) {
            throw new PemCredentials.Invalid("client_ca_file holds no certificate");
        }
        for (X509Certificate c : cas) {
            if (c.getBasicConstraints() < 0) {
                throw new PemCredentials.Invalid("client_ca_file: '" + c.getSubjectX500Principal().getName()
                        + "' is not a certificate authority (no CA basic constraint)");
            }
        }
        return cas.toArray(new X509Certificate[0]);
    }

    private SslContext build(PemCredentials credentials, X509Certificate[] clientCas) throws SSLException {
        String[] protocols = http2
                ? new String[] {ApplicationProtocolNames.HTTP_2, ApplicationProtocolNames.HTTP_1_1}
                : new String[] {ApplicationProtocolNames.HTTP_1_1};
        SslContextBuilder builder = SslContextBuilder
                .forServer(credentials.key(), credentials.chain().toArray(new X509Certificate[0]));
        if (clientCas != null) {
            builder.trustManager(clientCas)
                    .clientAuth(config.clientCertRequired() ? ClientAuth.REQUIRE : ClientAuth.OPTIONAL);
        }
        SslContext built = builder
                .sslProvider(provider)
                .protocols("TLSv1.3", "TLSv1.2")
                .ciphers(Http2SecurityUtil.CIPHERS, SupportedCipherSuiteFilter.INSTANCE)
                .applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                        ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                        ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT, protocols))
                .build();
        if (built instanceof OpenSslContext openSsl) {
            // Netty turns tickets off by default; with no keys given, BoringSSL makes and rotates its own. TLS 1.3
            // resumes only by ticket; TLS 1.2 also by the session cache, which is on.
            openSsl.sessionContext().setTicketKeys(new OpenSslSessionTicketKey[0]);
        }
        return built;
    }

    private static byte[] digest(byte[][] files) {
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            for (byte[] f : files) {
                d.update(Integer.toString(f.length).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                d.update(f);
            }
            return d.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The served certificate's subject and end of validity, and the provider; no key material. */
    String describe() {
        X509Certificate c = served;
        return c == null ? "nothing" : "'" + c.getSubjectX500Principal().getName() + "' valid until "
                + c.getNotAfter().toInstant() + " (" + providerName() + ", ALPN " + (http2 ? "h2, " : "") + "http/1.1"
                + (config.clientCaFile() == null ? "" : ", client certificates "
                        + (config.clientCertRequired() ? "required" : "optional")) + ")";
    }
}
