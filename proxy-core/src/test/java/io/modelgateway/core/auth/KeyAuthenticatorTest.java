package io.modelgateway.core.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.config.ConfigLoader;
import io.modelgateway.core.server.GatewayContext;
import io.modelgateway.core.upstream.UpstreamPools;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.testing.Embedded;
import io.modelgateway.core.testing.TestGateway;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import java.util.Map;
import org.junit.jupiter.api.Test;

class KeyAuthenticatorTest {
    private GatewayContext context;
    private EmbeddedChannel ch;

    @BeforeEach
    void setUp() throws Exception {
        context = Embedded.context();
        ch = new EmbeddedChannel(new KeyAuthenticator(context.exchanges()));
    }

    @AfterEach
    void tearDown() {
        assertThat(ch.finishAndReleaseAll()).isFalse();
        context.pools().close();
    }

    private GatewayRequest request(Endpoint e, String... headers) {
        GatewayRequest r = new GatewayRequest(Embedded.request(HttpMethod.POST, e.gatewayPath(), "{}", headers), e,
                e.style(), "req_test", true, 0);
        r.config(context.config());
        return r;
    }

    @Test
    void bearerKey_isAttachedAndPassedOn() {
        ch.writeInbound(request(Endpoint.CHAT_COMPLETIONS, "authorization", "Bearer " + TestGateway.KEY));
        GatewayRequest r = ch.readInbound();
        assertThat(r.key().name()).isEqualTo("test");
        r.release();
    }

    @Test
    void xApiKey_onOpenAiEndpoint_isAccepted() {
        ch.writeInbound(request(Endpoint.EMBEDDINGS, "X-Api-Key", "sk-limited"));
        GatewayRequest r = ch.readInbound();
        assertThat(r.key().name()).isEqualTo("limited");
        r.release();
    }

    @Test
    void missingKey_is401InStyleAndReleases() {
        GatewayRequest req = request(Endpoint.MESSAGES);
        ch.writeInbound(req);
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(401);
        assertThat(Embedded.body(r)).contains("authentication_error").contains("\"request_id\":\"req_test\"");
        assertThat(req.refCnt()).isZero();
    }

    @Test
    void differentKeysInBothHeaders_is401() {
        ch.writeInbound(request(Endpoint.CHAT_COMPLETIONS, "authorization", "Bearer " + TestGateway.KEY,
                "x-api-key", "sk-limited"));
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(401);
        r.release();
    }

    @Test
    void twoAuthorizationHeadersWithDifferentKeys_is401_theSameKeyRepeatedPasses() {
        GatewayRequest req = request(Endpoint.CHAT_COMPLETIONS);
        req.headers().add("authorization", "Bearer " + TestGateway.KEY).add("authorization", "Bearer sk-limited");
        ch.writeInbound(req);
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(401);
        assertThat(Embedded.body(r)).contains("two Authorization headers carry different keys")
                .doesNotContain("sk-limited").doesNotContain(TestGateway.KEY);
        assertThat(req.refCnt()).isZero();

        // one caller, whatever the number of lines: passes (an empty line counts as absent)
        GatewayRequest same = request(Endpoint.CHAT_COMPLETIONS);
        same.headers().add("authorization", "Bearer " + TestGateway.KEY).add("authorization", "Bearer " + TestGateway.KEY)
                .add("x-api-key", TestGateway.KEY).add("x-api-key", "");
        ch.writeInbound(same);
        GatewayRequest passed = ch.readInbound();
        assertThat(passed.key().name()).isEqualTo("test");
        passed.release();
    }

    @Test
    void twoXApiKeyHeadersWithDifferentKeys_is401() {
        GatewayRequest req = request(Endpoint.MESSAGES);
        req.headers().add("x-api-key", "sk-limited").add("X-Api-Key", TestGateway.KEY);
        ch.writeInbound(req);
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(401);
        assertThat(Embedded.body(r)).contains("authentication_error").contains("two x-api-key headers");
    }

    @Test
    void unknownKey_is401WithoutEchoingIt() {
        ch.writeInbound(request(Endpoint.CHAT_COMPLETIONS, "authorization", "Bearer sk-unknown-123"));
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(401);
        assertThat(Embedded.body(r)).doesNotContain("sk-unknown-123").contains("invalid_api_key");
    }

    @Test
    void otherMessages_passUntouched() {
        ch.writeInbound("not a request");
        assertThat((Object) ch.readInbound()).isEqualTo("not a request");
        assertThat(ApiStyle.values()).isNotEmpty();
    }
    /**
     * A key is found by the SHA-256 of its UTF-8 bytes however it is written in the header (the Bearer scheme in any
     * case, blanks after it) and whatever it holds: characters past ASCII (as a header value holds them: ISO-8859-1),
     * more than the 256 bytes hashed from the reused array, non-ASCII past that many. The configured hash is the
     * config loader's, of the key as a String.
     */
    @Test
    void anyKey_anyWayItIsWritten_isFoundByTheHashOfItsUtf8Bytes() throws Exception {
        String[] keys = {"sk-\u00fcn\u00efc\u00f8d\u00e9-\u00bf\u00a9\u00ff", "sk-" + "a".repeat(300),
                "sk-" + "b".repeat(200) + "\u00e9" + "c".repeat(100), "sk-" + "d".repeat(253)};
        for (String key : keys) {
            GatewayContext c = new GatewayContext(ConfigLoader.parse(TestGateway.simulatorConfig(), "test.yaml",
                    Map.of("GATEWAY_KEY", key), "127.0.0.1:0"), new UpstreamPools());
            EmbeddedChannel e = new EmbeddedChannel(new KeyAuthenticator(c.exchanges()));
            try {
                String[][] written = {{"authorization", "Bearer " + key}, {"authorization", "bearer  \t " + key},
                        {"Authorization", "BEARER " + key}, {"x-api-key", key}, {"authorization", key}};
                for (String[] h : written) {
                    GatewayRequest req = new GatewayRequest(Embedded.request(HttpMethod.POST,
                            Endpoint.CHAT_COMPLETIONS.gatewayPath(), "{}", h[0], h[1]), Endpoint.CHAT_COMPLETIONS,
                            ApiStyle.OPENAI, "req_test", true, 0);
                    req.config(c.config());
                    e.writeInbound(req);
                    GatewayRequest passed = e.readInbound();
                    assertThat(passed).as(h[0] + ": " + h[1]).isNotNull();
                    assertThat(passed.key().name()).isEqualTo("test");
                    passed.release();
                }
                // One character off, at its end: refused (and the next check starts from a clean digest).
                GatewayRequest wrong = new GatewayRequest(Embedded.request(HttpMethod.POST,
                        Endpoint.CHAT_COMPLETIONS.gatewayPath(), "{}", "authorization",
                        "Bearer " + key.substring(0, key.length() - 1) + "x"), Endpoint.CHAT_COMPLETIONS,
                        ApiStyle.OPENAI, "req_test", true, 0);
                wrong.config(c.config());
                e.writeInbound(wrong);
                FullHttpResponse r = e.readOutbound();
                assertThat(r.status().code()).isEqualTo(401);
                r.release();
                GatewayRequest again = new GatewayRequest(Embedded.request(HttpMethod.POST,
                        Endpoint.CHAT_COMPLETIONS.gatewayPath(), "{}", "x-api-key", key), Endpoint.CHAT_COMPLETIONS,
                        ApiStyle.OPENAI, "req_test", true, 0);
                again.config(c.config());
                e.writeInbound(again);
                GatewayRequest passed = e.readInbound();
                assertThat(passed.key().name()).isEqualTo("test");
                passed.release();
            } finally {
                assertThat(e.finishAndReleaseAll()).isFalse();
                c.pools().close();
            }
        }
    }
}
