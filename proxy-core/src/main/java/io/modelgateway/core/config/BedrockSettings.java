package io.modelgateway.core.config;

import java.util.Objects;

/**
 * A {@code type: bedrock} provider's own settings: its region and how requests are authenticated — SigV4 with an
 * access key, its secret and an optional session token, or (when none is given) the provider's {@code api_key} as a
 * Bedrock API key ({@code Authorization: Bearer}). Never printed with its secrets.
 *
 * @param region          e.g. {@code us-east-1}: the signing scope and the default endpoint's host
 * @param accessKeyId     null when the provider authenticates with a Bedrock API key
 * @param secretAccessKey null exactly when {@code accessKeyId} is
 * @param sessionToken    temporary credentials' token ({@code x-amz-security-token}); null for none
 */
public record BedrockSettings(String region, String accessKeyId, String secretAccessKey, String sessionToken) {
    /** The signing name of the Bedrock Runtime service. */
    public static final String SERVICE = "bedrock";

    public BedrockSettings {
        Objects.requireNonNull(region, "region");
        if ((accessKeyId == null) != (secretAccessKey == null)) {
            throw new IllegalArgumentException("an access key id goes with its secret");
        }
    }

    /** Whether requests are SigV4-signed (else the provider's api_key is sent as a bearer token). */
    public boolean signs() {
        return accessKeyId != null;
    }

    /** The Bedrock Runtime endpoint of a region, the base URL when {@code base_url} is not given. */
    public static String defaultEndpoint(String region) {
        return "https://bedrock-runtime." + region + ".amazonaws.com";
    }

    @Override
    public String toString() {
        return "BedrockSettings[region=" + region + ", credentials=" + (signs() ? "sigv4" : "api_key")
                + (sessionToken != null ? "+session" : "") + "]";
    }
}
