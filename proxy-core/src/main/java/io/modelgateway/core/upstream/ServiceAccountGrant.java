package io.modelgateway.core.upstream;

import io.modelgateway.core.config.GoogleSettings.ServiceAccount;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.Signature;
import java.util.Base64;

/**
 * How a Google service account (Vertex AI) obtains its access tokens: the signed-JWT grant (RFC 7523). A JWT signed
 * RS256 with the account's key ({@code iss} the account, {@code aud} Google's token endpoint, {@code scope}
 * cloud-platform, one hour) is exchanged at the key's {@code token_uri} for a bearer token; {@link AccessTokens}
 * caches and refreshes it. Equal by the account (its key material), so reloads of the same key share its tokens.
 */
public record ServiceAccountGrant(ServiceAccount account) implements AccessTokens.Grant {
    static final String SCOPE = "https://www.googleapis.com/auth/cloud-platform";
    /**
     * The grant's audience: Google's token endpoint, wherever the grant is posted (Google's own auth library does the
     * same; a key's {@code token_uri} only says where to post).
     */
    static final String AUDIENCE = "https://oauth2.googleapis.com/token";
    /** How long the signed JWT is valid (Google's maximum). */
    private static final long ASSERTION_SECONDS = 3600;

    @Override
    public URI tokenUrl() {
        return URI.create(account.tokenUri());
    }

    @Override
    public String form() throws GeneralSecurityException {
        return "grant_type=" + URLEncoder.encode("urn:ietf:params:oauth:grant-type:jwt-bearer", StandardCharsets.UTF_8)
                + "&assertion=" + assertion(account, System.currentTimeMillis() / 1000);
    }

    @Override
    public String describe() {
        return "service account " + account.clientEmail();
    }

    @Override
    public String tokenName() {
        return "the access token of the provider's service account";
    }

    /**
     * The signed JWT of the grant, issued at {@code nowSeconds}: base64url of the header, of the claims, and of the
     * RS256 signature of the two.
     */
    public static String assertion(ServiceAccount account, long nowSeconds) throws GeneralSecurityException {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        StringBuilder header = new StringBuilder(64).append("{\"alg\":\"RS256\",\"typ\":\"JWT\"");
        if (account.privateKeyId() != null) {
            header.append(",\"kid\":");
            jsonString(header, account.privateKeyId());
        }
        header.append('}');
        StringBuilder claims = new StringBuilder(256).append("{\"iss\":");
        jsonString(claims, account.clientEmail());
        claims.append(",\"scope\":\"").append(SCOPE).append("\",\"aud\":\"").append(AUDIENCE).append('"');
        claims.append(",\"iat\":").append(nowSeconds).append(",\"exp\":").append(nowSeconds + ASSERTION_SECONDS)
                .append('}');
        String signingInput = b64.encodeToString(header.toString().getBytes(StandardCharsets.UTF_8)) + '.'
                + b64.encodeToString(claims.toString().getBytes(StandardCharsets.UTF_8));
        Signature rsa = Signature.getInstance("SHA256withRSA");
        rsa.initSign(account.privateKey());
        rsa.update(signingInput.getBytes(StandardCharsets.US_ASCII));
        return signingInput + '.' + b64.encodeToString(rsa.sign());
    }

    private static void jsonString(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }
}
