package io.modelgateway.core.server;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Cipher;
import javax.crypto.EncryptedPrivateKeyInfo;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/**
 * A certificate chain and its private key read from PEM text, checked before any connection uses them: the chain
 * holds at least one certificate, the key is PKCS#8 (decrypted with its password when it is encrypted), and the key
 * is the leaf certificate's (a signature made with it verifies with the leaf's public key), so a rotation that has
 * written the new certificate but not yet its key is refused rather than served. Messages name what is wrong and
 * never contain key material or the password. Blocking-free but CPU-bound (a key check signs once): call it at start
 * and from the reload thread, never per connection.
 *
 * @param chain the certificates, leaf first, as in the file
 * @param key   the leaf's private key
 */
record PemCredentials(List<X509Certificate> chain, PrivateKey key) {
    private static final Pattern BLOCK = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*?)-----END \\1-----");
    private static final String[] KEY_ALGORITHMS = {"RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS"};

    /** What is wrong with a certificate or key file, in words for the operator's log. */
    static final class Invalid extends Exception {
        Invalid(String message) {
            super(message, null, false, false);
        }
    }

    PemCredentials {
        chain = List.copyOf(chain);
    }

    X509Certificate leaf() {
        return chain.get(0);
    }

    /**
     * Reads and checks a chain and a key.
     *
     * @param certPem  the certificate file's bytes
     * @param keyPem   the key file's bytes
     * @param password the key's password, or null for an unencrypted key
     */
    static PemCredentials read(byte[] certPem, byte[] keyPem, String password) throws Invalid {
        List<X509Certificate> chain = certificates(certPem);
        PrivateKey key = privateKey(keyPem, password);
        if (!matches(key, chain.get(0))) {
            throw new Invalid("the key in key_file is not the key of the first certificate in cert_file");
        }
        return new PemCredentials(chain, key);
    }

    static List<X509Certificate> certificates(byte[] pem) throws Invalid {
        List<X509Certificate> chain = new ArrayList<>();
        Matcher m = BLOCK.matcher(new String(pem, StandardCharsets.US_ASCII));
        try {
            CertificateFactory factory = CertificateFactory.getInstance("X.509");
            while (m.find()) {
                if (m.group(1).equals("CERTIFICATE")) {
                    byte[] der = Base64.getMimeDecoder().decode(m.group(2));
                    chain.add((X509Certificate) factory.generateCertificate(new ByteArrayInputStream(der)));
                }
            }
        } catch (CertificateException | IllegalArgumentException e) {
            throw new Invalid("cert_file holds a certificate that cannot be read");
        }
        if (chain.isEmpty()) {
            throw new Invalid("cert_file holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
        }
        return chain;
    }

    static PrivateKey privateKey(byte[] pem, String password) throws Invalid {
        Matcher m = BLOCK.matcher(new String(pem, StandardCharsets.US_ASCII));
        while (m.find()) {
            String type = m.group(1);
            byte[] der;
            try {
                der = Base64.getMimeDecoder().decode(m.group(2));
            } catch (IllegalArgumentException e) {
                throw new Invalid("key_file holds a key that is not valid base64");
            }
            switch (type) {
                case "PRIVATE KEY" -> {
                    return pkcs8(new PKCS8EncodedKeySpec(der));
                }
                case "ENCRYPTED PRIVATE KEY" -> {
                    if (password == null) {
                        throw new Invalid("key_file holds an encrypted key: set key_password");
                    }
                    return pkcs8(decrypt(der, password));
                }
                case "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY" -> throw new Invalid("key_file holds a "
                        + type.substring(0, type.indexOf(' ')) + " key in its traditional format; convert it to "
                        + "PKCS#8 with: openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8");
                default -> {
                    // another block (a certificate, EC parameters): look on
                }
            }
        }
        throw new Invalid("key_file holds no PEM private key (-----BEGIN PRIVATE KEY-----)");
    }

    private static PKCS8EncodedKeySpec decrypt(byte[] der, String password) throws Invalid {
        try {
            EncryptedPrivateKeyInfo info = new EncryptedPrivateKeyInfo(der);
            // PBES2 names its real algorithm (e.g. PBEWithHmacSHA256AndAES_256) only in its parameters.
            String algorithm = info.getAlgParameters() != null ? info.getAlgParameters().toString() : info.getAlgName();
            SecretKeyFactory factory = SecretKeyFactory.getInstance(algorithm);
            Cipher cipher = Cipher.getInstance(algorithm);
            cipher.init(Cipher.DECRYPT_MODE, factory.generateSecret(new PBEKeySpec(password.toCharArray())),
                    info.getAlgParameters());
            return info.getKeySpec(cipher);
        } catch (GeneralSecurityException | java.io.IOException e) {
            throw new Invalid("key_file holds an encrypted key that key_password does not open (or whose"
                    + " encryption this JDK does not know)");
        }
    }

    private static PrivateKey pkcs8(PKCS8EncodedKeySpec spec) throws Invalid {
        for (String algorithm : KEY_ALGORITHMS) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(spec);
            } catch (GeneralSecurityException e) {
                // not this algorithm: try the next
            }
        }
        throw new Invalid("key_file holds a private key of an algorithm this JDK cannot read");
    }

    /** Whether {@code key} belongs to {@code cert}: a signature made with the key verifies with the certificate. */
    static boolean matches(PrivateKey key, X509Certificate cert) throws Invalid {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "Ed25519", "Ed448", "EdDSA" -> key.getAlgorithm();
            default -> null;
        };
        if (algorithm == null) {
            throw new Invalid("key_file holds a " + key.getAlgorithm() + " key, which the gateway does not serve");
        }
        byte[] probe = "model-gateway key check".getBytes(StandardCharsets.US_ASCII);
        try {
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(cert.getPublicKey());
            verifier.update(probe);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false; // a key of another type than the certificate's
        }
    }
}
