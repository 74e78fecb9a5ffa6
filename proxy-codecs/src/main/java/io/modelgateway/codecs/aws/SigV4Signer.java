package io.modelgateway.codecs.aws;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * AWS Signature Version 4 ({@code AWS4-HMAC-SHA256}) for one set of credentials, one region and one service: the
 * canonical request, the string to sign, the signing key and the {@code Authorization} header value.
 *
 * <p>Built for the request path of a gateway: the signing key (four HMACs) is derived once per UTC day and kept; the
 * canonical request and the string to sign are written as bytes into one reusable array and hashed from there; the
 * payload hash is computed from the body's own buffers ({@link #payloadHash(ByteBuffer[])}), never from a copy; the
 * {@code x-amz-date} text is made once per second. What a request allocates is its header value and little else.
 *
 * <p>Not thread-safe: one instance per event loop (the gateway keeps one per provider per loop), so nothing here
 * needs a lock. The secret never leaves the instance: {@link #toString} does not print it.
 */
public final class SigV4Signer {
    public static final String ALGORITHM = "AWS4-HMAC-SHA256";
    /** SHA-256 of the empty string, the payload hash of a request without a body. */
    public static final String EMPTY_PAYLOAD_HASH = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ALGORITHM_LINE = (ALGORITHM + "\n").getBytes(StandardCharsets.US_ASCII);

    private final String accessKeyId;
    private final byte[] secretKey;
    private final String region;
    private final String service;
    private final MessageDigest sha256;
    /** Keyed with the day's signing key; doFinal resets it to that key for the next request. */
    private final Mac mac;
    private final Mac derive;
    /** The UTC day (days since the epoch) the signing key and the scope were made for; -1 before the first. */
    private long keyDay = -1;
    private String scope;
    private String credentialPrefix;
    /** The second the cached x-amz-date text is for. */
    private long dateSecond = Long.MIN_VALUE;
    private String amzDate;
    private byte[] scratch = new byte[512];
    private int length;
    private final byte[] digest = new byte[32];

    /**
     * @param accessKeyId     the access key id (also in every Authorization header, as AWS requires)
     * @param secretAccessKey the secret access key; kept only as the {@code AWS4}-prefixed key bytes
     * @param region          e.g. {@code us-east-1}
     * @param service         the signing name, e.g. {@code bedrock}
     */
    public SigV4Signer(String accessKeyId, String secretAccessKey, String region, String service) {
        this.accessKeyId = accessKeyId;
        this.secretKey = ("AWS4" + secretAccessKey).getBytes(StandardCharsets.UTF_8);
        this.region = region;
        this.service = service;
        try {
            this.sha256 = MessageDigest.getInstance("SHA-256");
            this.mac = Mac.getInstance("HmacSHA256");
            this.derive = Mac.getInstance("HmacSHA256");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 / HmacSHA256 are part of every JDK", e);
        }
    }

    /** The {@code x-amz-date} value ({@code yyyyMMdd'T'HHmmss'Z'}, UTC) for a moment; the same String within a second. */
    public String amzDate(long epochMillis) {
        long second = Math.floorDiv(epochMillis, 1000L);
        if (second != dateSecond) {
            dateSecond = second;
            amzDate = formatAmzDate(second);
        }
        return amzDate;
    }

    /** The hex SHA-256 of a body held in {@code buffers} (read from their positions, which are left unchanged). */
    public String payloadHash(ByteBuffer[] buffers) {
        for (ByteBuffer b : buffers) {
            sha256.update(b.duplicate());
        }
        return hexDigest();
    }

    /** The hex SHA-256 of {@code bytes}. */
    public String payloadHash(byte[] bytes) {
        sha256.update(bytes);
        return hexDigest();
    }

    private String hexDigest() {
        try {
            sha256.digest(digest, 0, 32);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
        byte[] hex = new byte[64];
        for (int i = 0; i < 32; i++) {
            hex[2 * i] = HEX[(digest[i] >> 4) & 0xF];
            hex[2 * i + 1] = HEX[digest[i] & 0xF];
        }
        return new String(hex, StandardCharsets.ISO_8859_1);
    }

    /**
     * The {@code Authorization} header value of a request.
     *
     * @param method         {@code POST}, {@code GET}, …
     * @param canonicalUri   the path as SigV4 wants it (see {@link #uriEncode}; non-S3 services encode the path as
     *                       sent once more)
     * @param canonicalQuery the canonical query string; empty for none
     * @param names          the signed header names: lower case, sorted, each once, {@code host} and
     *                       {@code x-amz-date} among them
     * @param values         their values, trimmed with inner runs of spaces collapsed ({@link #canonicalValue})
     * @param count          how many of {@code names} / {@code values} to use
     * @param payloadHash    the hex SHA-256 of the body
     * @param amzDate        the request's {@code x-amz-date} value ({@link #amzDate})
     */
    public String authorization(String method, CharSequence canonicalUri, CharSequence canonicalQuery,
            CharSequence[] names, CharSequence[] values, int count, CharSequence payloadHash, String amzDate) {
        String signedHeaders = signedHeaders(names, count);
        return authorization(method, canonicalUri, canonicalQuery, names, values, count, signedHeaders, payloadHash,
                amzDate);
    }

    /** As above with the {@code SignedHeaders} list precomputed ({@link #signedHeaders}), for a fixed header set. */
    public String authorization(String method, CharSequence canonicalUri, CharSequence canonicalQuery,
            CharSequence[] names, CharSequence[] values, int count, String signedHeaders, CharSequence payloadHash,
            String amzDate) {
        String signature = signature(method, canonicalUri, canonicalQuery, names, values, count, signedHeaders,
                payloadHash, amzDate);
        return credentialPrefix + ", SignedHeaders=" + signedHeaders + ", Signature=" + signature;
    }

    /** The hex signature alone (what the test vectors' {@code header-signature.txt} hold). */
    public String signature(String method, CharSequence canonicalUri, CharSequence canonicalQuery,
            CharSequence[] names, CharSequence[] values, int count, String signedHeaders, CharSequence payloadHash,
            String amzDate) {
        long day = dayOf(amzDate);
        if (day != keyDay) {
            deriveKey(day, amzDate.substring(0, 8));
        }
        // The canonical request, hashed.
        length = 0;
        ascii(method).newline().ascii(canonicalUri).newline().ascii(canonicalQuery).newline();
        for (int i = 0; i < count; i++) {
            ascii(names[i]).put((byte) ':').ascii(values[i]).newline();
        }
        newline().ascii(signedHeaders).newline().ascii(payloadHash);
        sha256.update(scratch, 0, length);
        try {
            sha256.digest(digest, 0, 32);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
        // The string to sign, HMAC'd with the day's key.
        length = 0;
        put(ALGORITHM_LINE).ascii(amzDate).newline().ascii(scope).newline();
        for (int i = 0; i < 32; i++) {
            put(HEX[(digest[i] >> 4) & 0xF]).put(HEX[digest[i] & 0xF]);
        }
        mac.update(scratch, 0, length);
        byte[] sig = mac.doFinal();
        byte[] hex = new byte[64];
        for (int i = 0; i < 32; i++) {
            hex[2 * i] = HEX[(sig[i] >> 4) & 0xF];
            hex[2 * i + 1] = HEX[sig[i] & 0xF];
        }
        return new String(hex, StandardCharsets.ISO_8859_1);
    }

    /** The string to sign of the last {@link #signature} call (tests compare it with the vectors'). */
    String lastStringToSign() {
        return new String(scratch, 0, length, StandardCharsets.UTF_8);
    }

    /** {@code host;x-amz-date;…}: the names joined with {@code ;}. */
    public static String signedHeaders(CharSequence[] names, int count) {
        StringBuilder b = new StringBuilder(64);
        for (int i = 0; i < count; i++) {
            if (i > 0) {
                b.append(';');
            }
            b.append(names[i]);
        }
        return b.toString();
    }

    /** The credential scope of this signer on the day of {@code amzDate}: {@code 20150830/us-east-1/service/aws4_request}. */
    public String scope(String amzDate) {
        return amzDate.substring(0, 8) + "/" + region + "/" + service + "/aws4_request";
    }

    private void deriveKey(long day, String dateStamp) {
        try {
            byte[] k = hmac(secretKey, dateStamp);
            k = hmac(k, region);
            k = hmac(k, service);
            k = hmac(k, "aws4_request");
            mac.init(new SecretKeySpec(k, "HmacSHA256"));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
        keyDay = day;
        scope = dateStamp + "/" + region + "/" + service + "/aws4_request";
        credentialPrefix = ALGORITHM + " Credential=" + accessKeyId + "/" + scope;
    }

    private byte[] hmac(byte[] key, String data) throws GeneralSecurityException {
        derive.init(new SecretKeySpec(key, "HmacSHA256"));
        return derive.doFinal(data.getBytes(StandardCharsets.UTF_8));
    }

    /** Days since the epoch of an {@code x-amz-date} (only its date part is read). */
    private static long dayOf(String amzDate) {
        int y = digits(amzDate, 0, 4);
        int m = digits(amzDate, 4, 2);
        int d = digits(amzDate, 6, 2);
        return java.time.LocalDate.of(y, m, d).toEpochDay();
    }

    private static int digits(String s, int from, int n) {
        int v = 0;
        for (int i = from; i < from + n; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                throw new IllegalArgumentException("not an x-amz-date: " + s);
            }
            v = v * 10 + (c - '0');
        }
        return v;
    }

    static String formatAmzDate(long epochSecond) {
        long day = Math.floorDiv(epochSecond, 86_400L);
        int secOfDay = (int) Math.floorMod(epochSecond, 86_400L);
        java.time.LocalDate date = java.time.LocalDate.ofEpochDay(day);
        char[] c = new char[16];
        put4(c, 0, date.getYear());
        put2(c, 4, date.getMonthValue());
        put2(c, 6, date.getDayOfMonth());
        c[8] = 'T';
        put2(c, 9, secOfDay / 3600);
        put2(c, 11, (secOfDay / 60) % 60);
        put2(c, 13, secOfDay % 60);
        c[15] = 'Z';
        return new String(c);
    }

    private static void put4(char[] c, int at, int v) {
        put2(c, at, v / 100);
        put2(c, at + 2, v % 100);
    }

    private static void put2(char[] c, int at, int v) {
        c[at] = (char) ('0' + v / 10);
        c[at + 1] = (char) ('0' + v % 10);
    }

    // ---- the scratch array: the canonical request and the string to sign are ASCII (the URI is %-encoded)

    private SigV4Signer ascii(CharSequence s) {
        int n = s.length();
        ensure(n * 3);
        for (int i = 0; i < n; i++) {
            char ch = s.charAt(i);
            if (ch < 0x80) {
                scratch[length++] = (byte) ch;
            } else {
                // Header values may hold non-ASCII text; SigV4 hashes their UTF-8 bytes.
                byte[] utf8 = String.valueOf(ch).getBytes(StandardCharsets.UTF_8);
                ensure(utf8.length);
                System.arraycopy(utf8, 0, scratch, length, utf8.length);
                length += utf8.length;
            }
        }
        return this;
    }

    private SigV4Signer put(byte b) {
        ensure(1);
        scratch[length++] = b;
        return this;
    }

    private SigV4Signer put(byte[] b) {
        ensure(b.length);
        System.arraycopy(b, 0, scratch, length, b.length);
        length += b.length;
        return this;
    }

    private SigV4Signer newline() {
        return put((byte) '\n');
    }

    private void ensure(int more) {
        if (length + more > scratch.length) {
            scratch = java.util.Arrays.copyOf(scratch, Math.max(scratch.length * 2, length + more));
        }
    }

    // ---- canonical forms (RFC 3986 encoding, header values), shared by the gateway and the test vectors

    /**
     * Appends {@code s} URI-encoded as SigV4 wants it: its UTF-8 bytes, every byte outside {@code A-Z a-z 0-9 - _ . ~}
     * as {@code %XX} (upper-case hex); {@code /} kept when {@code keepSlash}.
     */
    public static void uriEncode(CharSequence s, boolean keepSlash, StringBuilder out) {
        byte[] bytes = s.toString().getBytes(StandardCharsets.UTF_8);
        for (byte b : bytes) {
            int c = b & 0xFF;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'
                    || c == '.' || c == '~' || (keepSlash && c == '/')) {
                out.append((char) c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xF, 16)));
            }
        }
    }

    /** {@link #uriEncode(CharSequence, boolean, StringBuilder)} into a new String. */
    public static String uriEncode(CharSequence s, boolean keepSlash) {
        StringBuilder b = new StringBuilder(s.length() + 16);
        uriEncode(s, keepSlash, b);
        return b.toString();
    }

    /** A header value in canonical form: trimmed, each inner run of spaces and tabs made one space. */
    public static String canonicalValue(String value) {
        String v = value.strip();
        StringBuilder b = new StringBuilder(v.length());
        boolean space = false;
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c == ' ' || c == '\t') {
                if (!space) {
                    b.append(' ');
                }
                space = true;
            } else {
                b.append(c);
                space = false;
            }
        }
        return b.toString();
    }

    /**
     * The canonical headers of a header list: names lower-cased and sorted, the values of a name repeated joined
     * with {@code ,} in the order given, each value in {@link #canonicalValue canonical form}. Returns
     * {@code [names, values]}.
     */
    public static String[][] canonicalHeaders(List<Map.Entry<String, String>> headers) {
        TreeMap<String, List<String>> byName = new TreeMap<>();
        for (Map.Entry<String, String> h : headers) {
            byName.computeIfAbsent(h.getKey().toLowerCase(Locale.ROOT), k -> new ArrayList<>())
                    .add(canonicalValue(h.getValue()));
        }
        String[] names = byName.keySet().toArray(String[]::new);
        String[] values = new String[names.length];
        for (int i = 0; i < names.length; i++) {
            values[i] = String.join(",", byName.get(names[i]));
        }
        return new String[][] {names, values};
    }

    @Override
    public String toString() {
        return "SigV4Signer[" + region + "/" + service + "]";
    }
}
