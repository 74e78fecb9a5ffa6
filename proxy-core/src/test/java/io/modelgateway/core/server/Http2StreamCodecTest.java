package io.modelgateway.core.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The gateway's stream codec against Netty's general one ({@link Http2StreamFrameToHttpObjectCodec}, an independent
 * implementation of the same conversion): the same frames in give the same requests, bodies and trailers (Netty's
 * extension headers {@code x-http2-*} aside, which the gateway never adds), and the same answers out give the same
 * frames, header fields and end-of-stream flags. Every buffer is released (the leak detector runs at PARANOID).
 */
class Http2StreamCodecTest {

    private static final String BODY = "{\"model\":\"sim-chat\"}";

    /**
     * Runs the same inbound frames through both codecs and compares what they produced. One difference is meant:
     * several {@code cookie} fields reach HTTP/1.1 as one, joined by "; " (RFC 9113 section 8.2.3 says they MUST
     * be before being passed into a non-HTTP/2 context, as the gateway does when it forwards them), where Netty's
     * codec passes them as they came; Netty's are joined here before the comparison.
     */
    private static List<String> sameInbound(Supplier<List<Object>> frames) {
        List<String> ours = describeInbound(Http2StreamCodec.INSTANCE, frames.get());
        List<String> netty = new ArrayList<>();
        for (String d : describeInbound(new Http2StreamFrameToHttpObjectCodec(true), frames.get())) {
            netty.add(d.replaceAll("cookie: ([^,\\]]*), cookie: ", "cookie: $1; "));
        }
        assertThat(ours).isNotEmpty().isEqualTo(netty);
        return ours;
    }

    private static List<String> describeInbound(ChannelHandler codec, List<Object> frames) {
        EmbeddedChannel ch = new EmbeddedChannel(codec);
        for (Object frame : frames) {
            ch.writeInbound(frame);
        }
        List<String> out = new ArrayList<>();
        for (Object o = ch.readInbound(); o != null; o = ch.readInbound()) {
            StringBuilder d = new StringBuilder();
            if (o instanceof HttpRequest r) {
                d.append(r instanceof FullHttpRequest ? "full " : "head ").append(r.method()).append(' ')
                        .append(r.uri()).append(' ').append(r.protocolVersion()).append(fields(r.headers()));
            }
            if (o instanceof HttpContent c) {
                d.append(o instanceof LastHttpContent ? " last " : " content ")
                        .append(c.content().toString(StandardCharsets.UTF_8));
            }
            if (o instanceof LastHttpContent l) {
                d.append(" trailers").append(fields(l.trailingHeaders()));
            }
            out.add(d.toString());
            ReferenceCountUtil.release(o);
        }
        assertThat(ch.finishAndReleaseAll()).isFalse();
        return out;
    }

    /** Fields sorted, names in lower case, Netty's x-http2-* extension fields left out. */
    private static List<String> fields(HttpHeaders headers) {
        List<String> list = new ArrayList<>();
        for (Map.Entry<String, String> e : headers) {
            String name = e.getKey().toLowerCase();
            if (!name.startsWith("x-http2-")) {
                list.add(name + ": " + e.getValue());
            }
        }
        list.sort(null);
        return list;
    }

    private static List<String> fields(Http2Headers headers) {
        List<String> list = new ArrayList<>();
        for (Map.Entry<CharSequence, CharSequence> e : headers) {
            list.add(e.getKey() + ": " + e.getValue());
        }
        list.sort(null);
        return list;
    }

    private static Http2Headers post() {
        return new DefaultHttp2Headers().method("POST").scheme("https").path("/api/v1/chat/completions?x=1")
                .authority("gw.example:8443").add("content-type", "application/json")
                .add("authorization", "Bearer sk-1").add("cookie", "a=1").add("x-trace", "t1")
                .add("cookie", "b=2").add("x-trace", "t2");
    }

    private static ByteBuf body() {
        return Unpooled.copiedBuffer(BODY, StandardCharsets.UTF_8);
    }

    @Test
    void aRequestInOneHeadersFrame_isTheSameFullRequest_itsCookiesJoined() {
        List<String> request = sameInbound(() -> List.of(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().method("GET").scheme("https")
                .path("/api/v1/models").authority("127.0.0.1").add("accept", "*/*").add("cookie", "x=1")
                .add("cookie", "y=2"), true)));
        assertThat(request.get(0)).contains("cookie: x=1; y=2");
    }

    @Test
    void aRequestWithABody_withAndWithoutContentLength_andTrailers_isTheSame() {
        sameInbound(() -> List.of(new DefaultHttp2HeadersFrame(post(), false),
                new DefaultHttp2DataFrame(body(), false), new DefaultHttp2DataFrame(Unpooled.EMPTY_BUFFER, true)));
        sameInbound(() -> List.of(new DefaultHttp2HeadersFrame(post().add("content-length", "20"), false),
                new DefaultHttp2DataFrame(body(), true)));
        sameInbound(() -> List.of(new DefaultHttp2HeadersFrame(post(), false),
                new DefaultHttp2DataFrame(body(), false),
                new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().add("x-checksum", "abc"), true)));
    }

    /** Writes {@code answer} (fresh objects from the supplier) through both codecs and compares the frames. */
    private static void sameOutbound(Supplier<List<HttpObject>> answer) {
        List<String> ours = describeOutbound(Http2StreamCodec.INSTANCE, answer.get());
        assertThat(ours).isNotEmpty().isEqualTo(describeOutbound(new Http2StreamFrameToHttpObjectCodec(true),
                answer.get()));
    }

    private static List<String> describeOutbound(ChannelHandler codec, List<HttpObject> answer) {
        EmbeddedChannel ch = new EmbeddedChannel(codec);
        for (HttpObject o : answer) {
            assertThat(ch.writeOutbound(o)).isTrue();
        }
        List<String> out = new ArrayList<>();
        for (Object o = ch.readOutbound(); o != null; o = ch.readOutbound()) {
            if (o instanceof Http2HeadersFrame h) {
                out.add("HEADERS end=" + h.isEndStream() + " " + fields(h.headers()));
            } else if (o instanceof Http2DataFrame d) {
                out.add("DATA end=" + d.isEndStream() + " " + d.content().toString(StandardCharsets.UTF_8));
            } else {
                out.add(String.valueOf(o));
            }
            ReferenceCountUtil.release(o);
        }
        assertThat(ch.finishAndReleaseAll()).isFalse();
        return out;
    }

    private static void answerFields(HttpHeaders h) {
        h.add("Content-Type", "application/json").add("x-request-id", "req_1").add("Connection", "close, X-Hop")
                .add("X-Hop", "1").add("Keep-Alive", "timeout=5").add("Transfer-Encoding", "chunked")
                .add("Upgrade", "h2c").add("Proxy-Connection", "keep-alive").add("X-RateLimit-Limit-Requests", "100")
                .add("set-cookie", "a=1").add("set-cookie", "b=2");
    }

    @Test
    void aWholeAnswer_anEmptyOne_andA100Continue_giveTheSameFrames() {
        sameOutbound(() -> {
            FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, body());
            answerFields(r.headers());
            return List.of(r);
        });
        sameOutbound(() -> List.of(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.NO_CONTENT)));
        sameOutbound(() -> List.of(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE)));
        sameOutbound(() -> {
            FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, body());
            r.trailingHeaders().add("x-usage", "10");
            return List.of(r);
        });
    }

    @Test
    void aStreamedAnswer_itsChunks_anEmptyLastChunk_andTrailers_giveTheSameFrames() {
        sameOutbound(() -> {
            DefaultHttpResponse r = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            answerFields(r.headers());
            return List.of(r, new DefaultHttpContent(Unpooled.copiedBuffer("data: 1\n\n", StandardCharsets.UTF_8)),
                    new DefaultHttpContent(Unpooled.copiedBuffer("data: 2\n\n", StandardCharsets.UTF_8)),
                    LastHttpContent.EMPTY_LAST_CONTENT);
        });
        sameOutbound(() -> {
            DefaultHttpResponse r = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            LastHttpContent last = new DefaultLastHttpContent(Unpooled.copiedBuffer("end", StandardCharsets.UTF_8));
            last.trailingHeaders().add("X-Usage", "10");
            return List.of(r, last);
        });
        sameOutbound(() -> {
            LastHttpContent last = new DefaultLastHttpContent();
            last.trailingHeaders().add("x-usage", "10");
            return List.of(new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK), last);
        });
    }
}
