package io.modelgateway.core.config;

import java.security.PrivateKey;
import java.util.Objects;

/**
 * What a {@code vertex} or {@code gemini} provider needs besides the common provider fields.
 *
 * @param project  vertex: the Google Cloud project; null for gemini
 * @param location vertex: the region ({@code us-east5}) or {@code global}; null for gemini
 * @param account  vertex: the service account whose signed-JWT grant obtains the access tokens; null for gemini
 */
public record GoogleSettings(String project, String location, ServiceAccount account) {
    /** A gemini provider: its key goes in {@code x-goog-api-key}. */
    public static final GoogleSettings GEMINI = new GoogleSettings(null, null, null);

    /**
     * A service-account key, as read from its JSON file ({@code client_email}, {@code private_key},
     * {@code private_key_id}, {@code token_uri}).
     *
     * @param tokenUri where the signed JWT is exchanged for an access token (also the JWT's audience)
     */
    public record ServiceAccount(String clientEmail, PrivateKey privateKey, String privateKeyId, String tokenUri) {
        public ServiceAccount {
            Objects.requireNonNull(clientEmail, "clientEmail");
            Objects.requireNonNull(privateKey, "privateKey");
            Objects.requireNonNull(tokenUri, "tokenUri");
        }

        /** Never the key. */
        @Override
        public String toString() {
            return "ServiceAccount[" + clientEmail + ", tokenUri=" + tokenUri + "]";
        }

        /** By identity of the key material: two loads of the same file are the same account. */
        @Override
        public boolean equals(Object o) {
            return o instanceof ServiceAccount a && a.clientEmail.equals(clientEmail) && a.tokenUri.equals(tokenUri)
                    && Objects.equals(a.privateKeyId, privateKeyId)
                    && java.util.Arrays.equals(a.privateKey.getEncoded(), privateKey.getEncoded());
        }

        @Override
        public int hashCode() {
            return Objects.hash(clientEmail, tokenUri, privateKeyId);
        }
    }
}
