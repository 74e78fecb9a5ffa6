package io.modelgateway.codecs.aws;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.bedrock.BedrockModels;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;
import software.amazon.awssdk.identity.spi.AwsSessionCredentialsIdentity;

/**
 * The gateway's SigV4 signer against the AWS SDK for Java v2's own signer ({@code AwsV4HttpSigner}), on Bedrock
 * requests as the gateway sends them: the model id in the path (colons, an ARN's slashes), a JSON body, with and
 * without a session token, across a day boundary (the cached signing key must change with the date).
 */
class SigV4SignerAgainstAwsSdkTest {
    private static final String KEY_ID = "AKIDEXAMPLE0000000001";
    private static final String SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    private static final String TOKEN = "IQoJb3JpZ2luX2VjEXAMPLE//////////wEaCXVzLWVhc3QtMSJHMEUCIQ+session=";
    private static final String HOST = "bedrock-runtime.us-east-1.amazonaws.com";

    static Stream<Arguments> requests() {
        return Stream.of(
                Arguments.of("anthropic.claude-sonnet-4-5-20250929-v1:0", BedrockModels.Operation.INVOKE, null),
                Arguments.of("us.anthropic.claude-3-7-sonnet-20250219-v1:0", BedrockModels.Operation.INVOKE_STREAM,
                        TOKEN),
                Arguments.of("meta.llama3-3-70b-instruct-v1:0", BedrockModels.Operation.CONVERSE, TOKEN),
                Arguments.of("arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.meta.llama3-2-1b-instruct-v1:0",
                        BedrockModels.Operation.CONVERSE_STREAM, null));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("requests")
    void bedrockRequest_authorizationEqualsAwsSdkSigner(String model, BedrockModels.Operation op, String token) {
        String body = "{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"Hello, \\u00e9t\\u00e9 \u2603\"}]}]}";
        long now = Instant.parse("2026-11-25T13:45:07Z").toEpochMilli();
        String path = BedrockModels.path(model, op);

        assertThat(gateway(path, body, token, now)).isEqualTo(sdk(path, body, token, now));
    }

    @Test
    void signingKeyCachedPerDay_nextDaySignsWithNewKey_likeTheSdk() {
        SigV4Signer signer = new SigV4Signer(KEY_ID, SECRET, "us-east-1", "bedrock");
        String path = BedrockModels.path("mistral.mistral-large-2407-v1:0", BedrockModels.Operation.CONVERSE);
        String body = "{}";
        long before = Instant.parse("2026-11-25T23:59:59Z").toEpochMilli();
        long after = Instant.parse("2026-11-26T00:00:01Z").toEpochMilli();

        assertThat(sign(signer, path, body, null, before)).isEqualTo(sdk(path, body, null, before));
        assertThat(sign(signer, path, body, null, after)).isEqualTo(sdk(path, body, null, after))
                .contains("/20261126/us-east-1/bedrock/aws4_request");
        assertThat(sign(signer, path, body, null, before)).isEqualTo(sdk(path, body, null, before));
    }

    @Test
    void payloadHash_ofACompositeBody_equalsTheHashOfItsBytes() {
        SigV4Signer signer = new SigV4Signer(KEY_ID, SECRET, "us-east-1", "bedrock");
        ByteBuf composite = Unpooled.wrappedBuffer(Unpooled.copiedBuffer("{\"a\":", StandardCharsets.UTF_8),
                Unpooled.directBuffer().writeBytes("[1,2,3]}".getBytes(StandardCharsets.UTF_8)));
        try {
            assertThat(signer.payloadHash(composite.nioBuffers()))
                    .isEqualTo(signer.payloadHash("{\"a\":[1,2,3]}".getBytes(StandardCharsets.UTF_8)));
            assertThat(composite.readerIndex()).isZero();
        } finally {
            composite.release();
        }
    }

    private static String gateway(String path, String body, String token, long now) {
        return sign(new SigV4Signer(KEY_ID, SECRET, "us-east-1", "bedrock"), path, body, token, now);
    }

    private static String sign(SigV4Signer signer, String path, String body, String token, long now) {
        String amzDate = signer.amzDate(now);
        String hash = signer.payloadHash(body.getBytes(StandardCharsets.UTF_8));
        // As the SDK signs (and sends) them: the payload hash travels as x-amz-content-sha256.
        String[] names = token == null
                ? new String[] {"content-type", "host", "x-amz-content-sha256", "x-amz-date"}
                : new String[] {"content-type", "host", "x-amz-content-sha256", "x-amz-date", "x-amz-security-token"};
        String[] values = token == null
                ? new String[] {"application/json", HOST, hash, amzDate}
                : new String[] {"application/json", HOST, hash, amzDate, token};
        return signer.authorization("POST", BedrockModels.canonicalUri(path), "", names, values, names.length, hash,
                amzDate);
    }

    private static String sdk(String path, String body, String token, long now) {
        SdkHttpRequest request = SdkHttpRequest.builder().method(SdkHttpMethod.POST).protocol("https").host(HOST)
                .encodedPath(path).putHeader("Content-Type", "application/json").build();
        AwsCredentialsIdentity identity = token == null ? AwsCredentialsIdentity.create(KEY_ID, SECRET)
                : AwsSessionCredentialsIdentity.create(KEY_ID, SECRET, token);
        SignedRequest signed = AwsV4HttpSigner.create().sign(r -> r.identity(identity).request(request)
                .payload(ContentStreamProvider.fromUtf8String(body))
                .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, "bedrock")
                .putProperty(AwsV4HttpSigner.REGION_NAME, "us-east-1")
                .putProperty(HttpSigner.SIGNING_CLOCK, Clock.fixed(Instant.ofEpochMilli(now), ZoneOffset.UTC)));
        return signed.request().firstMatchingHeader("Authorization").orElseThrow();
    }
}
