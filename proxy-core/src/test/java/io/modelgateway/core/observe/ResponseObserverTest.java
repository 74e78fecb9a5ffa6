package io.modelgateway.core.observe;

import io.modelgateway.core.exchange.ExchangeRecord;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.Endpoint;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCounted;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ResponseObserverTest {
    private ResponseObserver observer;
    private EmbeddedChannel ch;

    @BeforeEach
    void setUp() {
        observer = new ResponseObserver();
        ch = new EmbeddedChannel(new io.modelgateway.core.server.AnswerBoundary(), observer);
    }

    @AfterEach
    void tearDown() {
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    private static ExchangeRecord record(String id) {
        return new ExchangeRecord(id, Endpoint.CHAT_COMPLETIONS, System.nanoTime(), System.currentTimeMillis(), 10);
    }

    private static ByteBuf bytes(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
    }

    /** Reads the next outbound message, checks it is {@code expected} with its ref count untouched, releases it. */
    private void assertPassedThrough(Object expected, int refCnt) {
        Object out = ch.readOutbound();
        assertThat(out).isSameAs(expected);
        if (out instanceof ReferenceCounted rc) {
            assertThat(rc.refCnt()).isEqualTo(refCnt);
            rc.release();
        }
    }

    @Test
    void stream_headBodyLast_stampStatusBytesFirstByteAndCompletion() {
        ExchangeRecord r = record("req_stream");
        r.stream(true);
        observer.expect(r);

        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        ch.writeOutbound(head);
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.firstByteLatencyNanos()).isEqualTo(-1);
        assertPassedThrough(head, 1);

        HttpContent empty = new DefaultHttpContent(Unpooled.EMPTY_BUFFER);
        ch.writeOutbound(empty);
        assertThat(r.firstByteLatencyNanos()).as("an empty chunk is not the first byte").isEqualTo(-1);
        assertPassedThrough(empty, 1);

        HttpContent chunk = new DefaultHttpContent(bytes("data: {\"x\":1}\n\n"));
        ch.writeOutbound(chunk);
        assertThat(r.firstByteLatencyNanos()).isGreaterThanOrEqualTo(0);
        assertThat(r.bytesOut()).isEqualTo(15);
        assertThat(r.responseComplete()).isFalse();
        assertPassedThrough(chunk, 1);

        LastHttpContent last = new DefaultLastHttpContent(bytes("data: [DONE]\n\n"));
        ch.writeOutbound(last);
        assertThat(r.bytesOut()).isEqualTo(15 + 14);
        assertThat(r.responseComplete()).isTrue();
        assertThat(observer.pendingCount()).isZero();
        assertPassedThrough(last, 1);
    }

    @Test
    void fullResponse_isHeadBodyAndEndAtOnce() {
        ExchangeRecord r = record("req_full");
        observer.expect(r);
        FullHttpResponse full = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                bytes("{\"ok\":true}"));

        ch.writeOutbound(full);

        assertThat(r.status()).isEqualTo(200);
        assertThat(r.bytesOut()).isEqualTo(11);
        assertThat(r.firstByteLatencyNanos()).isGreaterThanOrEqualTo(0);
        assertThat(r.responseComplete()).isTrue();
        assertThat(observer.pendingCount()).isZero();
        assertPassedThrough(full, 1);
    }

    @Test
    void pipelinedRecords_areStampedInRequestOrder() {
        ExchangeRecord first = record("req_1");
        ExchangeRecord second = record("req_2");
        observer.expect(first);
        observer.expect(second);

        FullHttpResponse a = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, bytes("aaaa"));
        ch.writeOutbound(a);
        assertThat(first.status()).isEqualTo(200);
        assertThat(first.responseComplete()).isTrue();
        assertThat(second.status()).isZero();
        assertThat(observer.pendingCount()).isEqualTo(1);

        FullHttpResponse b = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.TOO_MANY_REQUESTS,
                bytes("bb"));
        ch.writeOutbound(b);
        assertThat(second.status()).isEqualTo(429);
        assertThat(second.bytesOut()).isEqualTo(2);
        assertThat(second.responseComplete()).isTrue();
        assertThat(first.bytesOut()).isEqualTo(4);
        assertThat(observer.pendingCount()).isZero();

        assertPassedThrough(a, 1);
        assertPassedThrough(b, 1);
    }

    @Test
    void noRecord_writesPassUntouched() {
        FullHttpResponse health = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                bytes("{\"status\":\"ok\"}"));
        ByteBuf raw = bytes("not http");

        ch.writeOutbound(health, raw);

        assertPassedThrough(health, 1);
        assertPassedThrough(raw, 1);
        assertThat(observer.pendingCount()).isZero();
    }

    @Test
    void interim100Continue_isNotTheAnswer() {
        ExchangeRecord r = record("req_continue");
        observer.expect(r);
        FullHttpResponse cont = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE);

        ch.writeOutbound(cont);

        assertThat(r.status()).isZero();
        assertThat(r.responseComplete()).isFalse();
        assertThat(observer.pendingCount()).isEqualTo(1);
        assertPassedThrough(cont, 1);

        FullHttpResponse answer = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.BAD_REQUEST,
                bytes("{}"));
        ch.writeOutbound(answer);
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.responseComplete()).isTrue();
        assertPassedThrough(answer, 1);
    }

    @Test
    void retainedWrite_keepsItsExtraReference() {
        ExchangeRecord r = record("req_retained");
        observer.expect(r);
        LastHttpContent last = new DefaultLastHttpContent(bytes("xyz"));
        last.retain(); // e.g. a handler that keeps a reference for a retry

        ch.writeOutbound(last);

        assertThat(r.bytesOut()).isEqualTo(3);
        assertPassedThrough(last, 2);
        assertThat(last.release()).isTrue();
    }

    @Test
    void channelClosed_dropsPendingRecords() {
        ExchangeRecord r = record("req_gone");
        observer.expect(r);

        ch.close();

        assertThat(observer.pendingCount()).isZero();
        assertThat(r.status()).isZero();
    }
}
