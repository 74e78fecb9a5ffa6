package io.modelgateway.codecs.aws;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The gateway's SigV4 signer against AWS's published Signature Version 4 test vectors (copied, with their source, in
 * {@code src/test/resources/aws-sig-v4-test-suite}): for each vector, the request is signed with the vector's
 * credentials, region, service and time, and the string to sign (which carries the hash of the canonical request)
 * and the signature must be AWS's expected ones byte for byte.
 */
class SigV4SignerVectorsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    static Stream<String> vectors() throws IOException, URISyntaxException {
        Path dir = suite();
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(Files::isDirectory).map(p -> p.getFileName().toString()).sorted().toList().stream();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vectors")
    void vector_stringToSignAndSignature_matchAws(String name) throws Exception {
        Path dir = suite().resolve(name);
        JsonNode context = JSON.readTree(Files.readString(dir.resolve("context.json")));
        JsonNode creds = context.get("credentials");
        String amzDate = SigV4Signer.formatAmzDate(Instant.parse(context.get("timestamp").asText()).getEpochSecond());

        String request = Files.readString(dir.resolve("request.txt"), StandardCharsets.UTF_8);
        int blank = request.indexOf("\n\n");
        String head = blank < 0 ? request : request.substring(0, blank);
        String body = blank < 0 ? "" : request.substring(blank + 2);
        String[] lines = head.split("\n");
        String[] requestLine = lines[0].split(" ");
        String method = requestLine[0];
        String path = lines[0].substring(method.length() + 1, lines[0].lastIndexOf(' '));
        List<Map.Entry<String, String>> headers = new ArrayList<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            headers.add(new AbstractMap.SimpleEntry<>(lines[i].substring(0, colon), lines[i].substring(colon + 1)));
        }
        SigV4Signer signer = new SigV4Signer(creds.get("access_key_id").asText(),
                creds.get("secret_access_key").asText(), context.get("region").asText(),
                context.get("service").asText());
        String payloadHash = signer.payloadHash(body.getBytes(StandardCharsets.UTF_8));
        headers.add(new AbstractMap.SimpleEntry<>("X-Amz-Date", amzDate));
        if (creds.has("token") && !context.path("omit_session_token").asBoolean(false)) {
            headers.add(new AbstractMap.SimpleEntry<>("X-Amz-Security-Token", creds.get("token").asText()));
        }
        if (context.path("sign_body").asBoolean(false)) {
            headers.add(new AbstractMap.SimpleEntry<>("x-amz-content-sha256", payloadHash));
        }
        String[][] canonical = SigV4Signer.canonicalHeaders(headers);
        String signedHeaders = SigV4Signer.signedHeaders(canonical[0], canonical[0].length);

        String signature = signer.signature(method, SigV4Signer.uriEncode(path, true), "", canonical[0], canonical[1],
                canonical[0].length, signedHeaders, payloadHash, amzDate);

        assertThat(signer.lastStringToSign()).isEqualTo(read(dir, "header-string-to-sign.txt"));
        assertThat(signature).isEqualTo(read(dir, "header-signature.txt"));
        // The canonical request's own lines: the signed-headers list and the payload hash end it.
        String canonicalRequest = read(dir, "header-canonical-request.txt");
        assertThat(canonicalRequest).endsWith(signedHeaders + "\n" + payloadHash);
        assertThat(canonicalRequest).startsWith(method + "\n" + SigV4Signer.uriEncode(path, true) + "\n");
    }

    private static String read(Path dir, String file) throws IOException {
        return Files.readString(dir.resolve(file), StandardCharsets.UTF_8).strip();
    }

    private static Path suite() throws URISyntaxException {
        return Path.of(SigV4SignerVectorsTest.class.getResource("/aws-sig-v4-test-suite").toURI());
    }
}
