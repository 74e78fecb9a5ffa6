package io.modelgateway.core.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.error.ErrorKind;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The head checks after the codec: raw request bytes in, the decoded (and judged) messages out. */
class RequestHeadValidatorTest {
    private EmbeddedChannel ch;

    @BeforeEach
    void setUp() {
        ch = new EmbeddedChannel(new HttpRequestDecoder(), new RequestHeadValidator());
    }

    @AfterEach
    void tearDown() {
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    private HttpRequest head(String request) {
        ch.writeInbound(Unpooled.copiedBuffer(request, StandardCharsets.US_ASCII));
        HttpRequest head = ch.readInbound();
        Object rest;
        while ((rest = ch.readInbound()) != null) {
            ReferenceCountUtil.release(rest);
        }
        return head;
    }

    private static ErrorKind refusal(HttpRequest head) {
        if (head.decoderResult().isSuccess()) {
            return null;
        }
        return ((RequestHeadValidator.Refusal) head.decoderResult().cause()).error().kind();
    }

    @Test
    void http11WithOneHost_passesUntouched() {
        HttpRequest h = head("GET /health HTTP/1.1\r\nHost: gw.example:8080\r\n\r\n");
        assertThat(h.decoderResult().isSuccess()).isTrue();
        assertThat(h.uri()).isEqualTo("/health");
    }

    @Test
    void otherHttpVersions_are505_http10Passes() {
        for (String v : new String[] {"HTTP/1.2", "HTTP/1.9", "HTTP/2.0", "HTTP/3.0", "HTTP/0.9"}) {
            assertThat(refusal(head("GET /health " + v + "\r\nHost: x\r\n\r\n"))).as(v)
                    .isEqualTo(ErrorKind.HTTP_VERSION_NOT_SUPPORTED);
            ch = new EmbeddedChannel(new HttpRequestDecoder(), new RequestHeadValidator());
        }
        assertThat(refusal(head("GET /health HTTP/1.0\r\n\r\n"))).isNull();
    }

    @Test
    void host_missingOnHttp11_doubled_orMalformed_is400() {
        assertThat(refusal(head("GET /health HTTP/1.1\r\n\r\n"))).isEqualTo(ErrorKind.INVALID_REQUEST);
        ch = new EmbeddedChannel(new HttpRequestDecoder(), new RequestHeadValidator());
        assertThat(refusal(head("GET /health HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n"))).isEqualTo(ErrorKind.INVALID_REQUEST);
        ch = new EmbeddedChannel(new HttpRequestDecoder(), new RequestHeadValidator());
        assertThat(refusal(head("GET /health HTTP/1.1\r\nHost: a@b\r\n\r\n"))).isEqualTo(ErrorKind.INVALID_REQUEST);
        ch = new EmbeddedChannel(new HttpRequestDecoder(), new RequestHeadValidator());
        assertThat(refusal(head("GET /health HTTP/1.1\r\nHost:\r\n\r\n"))).as("empty is allowed").isNull();
        ch = new EmbeddedChannel(new HttpRequestDecoder(), new RequestHeadValidator());
        assertThat(refusal(head("GET /health HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n"))).isNull();
    }

    @Test
    void absoluteForm_isRewrittenToItsPathAndQuery() {
        assertThat(head("POST http://gw.example:8080/api/v1/chat/completions?a=1 HTTP/1.1\r\nHost: gw.example\r\n"
                + "Content-Length: 0\r\n\r\n").uri()).isEqualTo("/api/v1/chat/completions?a=1");
        assertThat(RequestHeadValidator.originForm("https://h")).isEqualTo("/");
        assertThat(RequestHeadValidator.originForm("HTTP://h?q=1")).isEqualTo("/?q=1");
        assertThat(RequestHeadValidator.originForm("ftp://h/x")).isNull();
    }

    @Test
    void refusedRequest_itsBodyPasses_whatFollowsIsDropped() {
        ch.writeInbound(Unpooled.copiedBuffer("POST /api/v1/embeddings HTTP/1.1\r\nExpect: 100-continue\r\n"
                + "Content-Length: 2\r\n\r\n{}GET /health HTTP/1.1\r\nHost: x\r\n\r\n", StandardCharsets.US_ASCII));
        HttpRequest refused = ch.readInbound();
        assertThat(refused.decoderResult().isFailure()).isTrue();
        assertThat(refused.headers().contains("expect")).as("no 100 Continue for it").isFalse();
        HttpContent body = ch.readInbound();
        assertThat(body).isInstanceOf(LastHttpContent.class);
        body.release();
        assertThat((Object) ch.readInbound()).as("the pipelined request after it").isNull();
    }
}
