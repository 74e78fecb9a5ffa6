package io.modelgateway.core.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.testing.Embedded;
import io.netty.channel.embedded.EmbeddedChannel;
import io.prometheus.metrics.model.registry.Collector;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class MetricsResponderTest {
    private final GatewayMetrics metrics = new GatewayMetrics(() -> 2);
    private final EmbeddedChannel ch = new EmbeddedChannel(new MetricsResponder(metrics));

    @AfterEach
    void tearDown() {
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void getMetrics_answersExpositionAndReleasesRequest() {
        metrics.started(Records.stream("team-a", "m"));
        FullHttpRequest req = Embedded.request(HttpMethod.GET, "/metrics?name[]=x", "");

        ch.writeInbound(req);

        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(200);
        assertThat(r.headers().get("content-type")).isEqualTo("text/plain; version=0.0.4; charset=utf-8");
        assertThat(r.headers().getInt("content-length")).isEqualTo(r.content().readableBytes());
        assertThat(r.headers().get("x-request-id")).startsWith("req_");
        assertThat(Embedded.body(r)).contains("gateway_inflight_exchanges 1.0\n", "gateway_upstream_connections 2.0\n");
        assertThat(req.refCnt()).isZero();
        assertThat((Object) ch.readInbound()).isNull();
        assertThat(ch.isOpen()).isTrue();
    }

    @Test
    void connectionClose_closesAfterTheAnswer() {
        ch.writeInbound(Embedded.request(HttpMethod.GET, "/metrics", "", "connection", "close"));

        FullHttpResponse r = ch.readOutbound();
        assertThat(r.headers().get("connection")).isEqualTo("close");
        r.release();
        assertThat(ch.isOpen()).isFalse();
    }

    @Test
    void postMetrics_is405AndReleasesRequest() {
        FullHttpRequest req = Embedded.request(HttpMethod.POST, "/metrics", "{}");

        ch.writeInbound(req);

        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(405);
        assertThat(Embedded.body(r)).contains("method_not_allowed");
        assertThat(req.refCnt()).isZero();
    }

    @Test
    void otherPaths_passOnUntouched() {
        FullHttpRequest api = Embedded.request(HttpMethod.POST, "/api/v1/chat/completions", "{}");
        FullHttpRequest similar = Embedded.request(HttpMethod.GET, "/metricsx", "");

        ch.writeInbound(api, similar);

        FullHttpRequest first = ch.readInbound();
        FullHttpRequest second = ch.readInbound();
        assertThat(first).isSameAs(api);
        assertThat(second).isSameAs(similar);
        assertThat(api.refCnt()).isEqualTo(1);
        assertThat(similar.refCnt()).isEqualTo(1);
        api.release();
        similar.release();
        assertThat((Object) ch.readOutbound()).isNull();
    }

    @Test
    void scrapeFails_answers500PlainText_andLogsOncePerDistinctFailure() {
        boolean[] second = {false};
        Collector broken = () -> {
            throw second[0] ? new IllegalArgumentException("another failure") : new IllegalStateException("broken");
        };
        metrics.registry().register(broken);
        List<String> warnings = new CopyOnWriteArrayList<>();
        Logger logger = Logger.getLogger(MetricsResponder.class.getName());
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
                    warnings.add(record.getMessage());
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(capture);
        try {
            for (int i = 0; i < 5; i++) { // a scrape flood on the same failure
                ch.writeInbound(Embedded.request(HttpMethod.GET, "/metrics", ""));
                FullHttpResponse r = ch.readOutbound();
                assertThat(r.status().code()).isEqualTo(500);
                assertThat(r.headers().get("content-type")).isEqualTo("text/plain; charset=utf-8");
                assertThat(r.headers().getInt("content-length")).isEqualTo(r.content().readableBytes());
                assertThat(Embedded.body(r))
                        .isEqualTo("The metrics could not be rendered; the gateway log says why.\n");
            }
            assertThat(ch.isOpen()).as("the connection stays usable").isTrue();
            assertThat(warnings).hasSize(1);
            assertThat(warnings.get(0)).contains("/metrics", "IllegalStateException", "broken");

            second[0] = true;
            ch.writeInbound(Embedded.request(HttpMethod.GET, "/metrics", ""));
            ch.writeInbound(Embedded.request(HttpMethod.GET, "/metrics", ""));
            for (int i = 0; i < 2; i++) {
                FullHttpResponse r = ch.readOutbound();
                assertThat(r.status().code()).isEqualTo(500);
                r.release();
            }
            assertThat(warnings).hasSize(2);
            assertThat(warnings.get(1)).contains("IllegalArgumentException", "another failure");
        } finally {
            logger.removeHandler(capture);
        }
    }
}
