package io.modelgateway.core.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.testing.Embedded;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The request step that checks the messages version header (GD-2) and peeks the body, alone on an EmbeddedChannel. */
class RequestValidatorTest {
    private static final String CHAT = "{\"model\":\"sim-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    private static final String MESSAGES = "{\"model\":\"sim-chat\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}";
    private GatewayContext context;
    private EmbeddedChannel ch;

    @BeforeEach
    void setUp() throws Exception {
        context = Embedded.context();
        ch = new EmbeddedChannel(new RequestValidator(context.exchanges()));
    }

    @AfterEach
    void tearDown() {
        assertThat(ch.finishAndReleaseAll()).isFalse();
        context.pools().close();
    }

    private GatewayRequest request(Endpoint e, String body, String... headers) {
        return Embedded.apiRequest(context, e, body, headers);
    }

    /** The 400 the step answered, its body read and the request checked released and ended as rejected. */
    private String refused(GatewayRequest req) {
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(400);
        assertThat(req.refCnt()).isZero();
        assertThat(req.record().outcome()).isEqualTo(Outcome.REJECTED);
        assertThat((Object) ch.readInbound()).isNull();
        return Embedded.body(r);
    }

    /** The request the step let through, with what it read; released here. */
    private void passed(GatewayRequest req) {
        GatewayRequest out = ch.readInbound();
        assertThat(out).isSameAs(req);
        assertThat(out.peek()).isNotNull();
        assertThat(out.peek().model()).isEqualTo("sim-chat");
        assertThat((Object) ch.readOutbound()).isNull();
        out.release();
    }

    @Test
    void chat_wellFormed_goesOnWithItsPeek() {
        passed(send(request(Endpoint.CHAT_COMPLETIONS, CHAT)));
    }

    @Test
    void notJson_is400() {
        assertThat(refused(send(request(Endpoint.CHAT_COMPLETIONS, "{not json")))).contains("invalid_request_error");
    }

    @Test
    void missingVersionHeader_onMessages_is400NamingTheAlias() {
        assertThat(refused(send(request(Endpoint.MESSAGES, MESSAGES)))).contains("\"type\":\"invalid_request_error\"")
                .contains("anthropic-version: header is required (vendor-version is accepted as an alias)");
    }

    @Test
    void vendorVersionAlone_isAcceptedAsTheVersion() {
        GatewayRequest req = send(request(Endpoint.MESSAGES, MESSAGES, "vendor-version", "2023-06-01"));
        assertThat(req.anthropicVersion()).isEqualTo("2023-06-01");
        passed(req);
    }

    @Test
    void vendorVersion_isValidatedLikeAnthropicVersion() {
        assertThat(refused(send(request(Endpoint.MESSAGES, MESSAGES, "vendor-version", "2023-01-01"))))
                .contains("vendor-version: '2023-01-01' is not a supported version");
    }

    @Test
    void versionAndAliasThatDiffer_is400_sameValueTwicePasses() {
        assertThat(refused(send(request(Endpoint.MESSAGES, MESSAGES, "anthropic-version", "2023-06-01",
                "vendor-version", "2026-10-21")))).contains("anthropic-version and vendor-version carry different versions");
        passed(send(request(Endpoint.MESSAGES, MESSAGES, "anthropic-version", "2023-06-01",
                "vendor-version", "2023-06-01")));
    }

    @Test
    void dateShape_isWhatTheRegexAccepts() {
        java.util.regex.Pattern date = java.util.regex.Pattern.compile("\\d{4}-\\d{2}-\\d{2}");
        java.util.Random rnd = new java.util.Random(11);
        String alphabet = "0123456789-- x/\u0662\uff11T";
        java.util.List<String> samples = new java.util.ArrayList<>(java.util.List.of("2023-06-01", "2023-6-01",
                "2023-06-011", "", "2023/06/01", "\u0662023-06-01", "2023-06-0\uff11", " 2023-06-01", "abcd-ef-gh"));
        for (int i = 0; i < 20_000; i++) {
            StringBuilder b = new StringBuilder(rnd.nextInt(4) == 0 ? "2023-06-01" : "");
            int edits = rnd.nextInt(3);
            for (int e = 0; e < edits || b.length() == 0 && e < 12; e++) {
                int at = b.length() == 0 ? 0 : rnd.nextInt(b.length() + 1);
                char c = alphabet.charAt(rnd.nextInt(alphabet.length()));
                if (rnd.nextBoolean() && at < b.length()) {
                    b.setCharAt(at, c);
                } else {
                    b.insert(at, c);
                }
            }
            samples.add(b.toString());
        }
        for (String s : samples) {
            assertThat(RequestValidator.isDate(s)).as(s).isEqualTo(date.matcher(s).matches());
        }
    }

    @Test
    void twoDifferentAnthropicVersionLines_is400() {
        GatewayRequest req = request(Endpoint.MESSAGES, MESSAGES);
        req.headers().add("anthropic-version", "2023-06-01").add("anthropic-version", "2026-10-21");
        assertThat(refused(send(req))).contains("two anthropic-version headers carry different versions");
    }

    @Test
    void duplicateModelKey_is400AndNothingGoesOn() {
        // last key wins in a plain parser; an upstream that takes the first would serve the other model
        assertThat(refused(send(request(Endpoint.CHAT_COMPLETIONS,
                "{\"model\":\"sim-embed\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"model\":\"sim-chat\"}"))))
                .contains("\"param\":\"model\"").contains("\"code\":\"duplicate_key\"");
    }

    private GatewayRequest send(GatewayRequest req) {
        ch.writeInbound(req);
        return req;
    }
}
