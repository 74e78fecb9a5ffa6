package io.modelgateway.core.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.config.HostAndPort;
import io.modelgateway.core.testing.Embedded;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class AdminServerTest {
    private final GatewayMetrics metrics = new GatewayMetrics(() -> 4);
    private final AtomicBoolean ready = new AtomicBoolean(true);

    /** The real listener on a loopback socket, asked by the JDK's HTTP client. */
    @Nested
    class OverLoopback {
        private AdminServer server;
        private HttpClient client;

        @BeforeEach
        void start() throws InterruptedException {
            server = new AdminServer(new HostAndPort("127.0.0.1", 0), metrics, ready::get).start();
            client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(5)).build();
        }

        @AfterEach
        void stop() {
            server.close();
            server.close();
        }

        private HttpResponse<String> send(String method, String path) throws Exception {
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                    .timeout(Duration.ofSeconds(5))
                    .method(method, method.equals("GET") ? HttpRequest.BodyPublishers.noBody()
                            : HttpRequest.BodyPublishers.ofString("{}"))
                    .build();
            return client.send(request, HttpResponse.BodyHandlers.ofString());
        }

        @Test
        void metrics_isTheExposition() throws Exception {
            metrics.started(Records.stream("team-a", "m"));
            metrics.ended(Records.stream("team-a", "m"));

            HttpResponse<String> r = send("GET", "/metrics");

            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("content-type"))
                    .hasValue("text/plain; version=0.0.4; charset=utf-8");
            assertThat(r.body()).contains(
                    "gateway_requests_total{endpoint=\"chat_completions\",key=\"team-a\",model=\"m\","
                            + "outcome=\"done\",status=\"200\"} 1.0\n",
                    "gateway_upstream_connections 4.0\n");
        }

        @Test
        void health_isOk() throws Exception {
            HttpResponse<String> r = send("GET", "/health");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
            assertThat(r.body()).isEqualTo("{\"status\":\"ok\"}");
        }

        @Test
        void ready_followsTheSupplier() throws Exception {
            HttpResponse<String> up = send("GET", "/ready");
            assertThat(up.statusCode()).isEqualTo(200);
            assertThat(up.body()).isEqualTo("{\"status\":\"ready\"}");

            ready.set(false);
            HttpResponse<String> draining = send("GET", "/ready");
            assertThat(draining.statusCode()).isEqualTo(503);
            assertThat(draining.body()).isEqualTo("{\"status\":\"draining\"}");
        }

        @Test
        void unknownPath_is404() throws Exception {
            assertThat(send("GET", "/api/v1/models").statusCode()).isEqualTo(404);
        }

        @Test
        void otherMethods_are405WithAllow() throws Exception {
            HttpResponse<String> r = send("POST", "/metrics");
            assertThat(r.statusCode()).isEqualTo(405);
            assertThat(r.headers().firstValue("allow")).hasValue("GET");
            assertThat(send("DELETE", "/health").statusCode()).isEqualTo(405);
        }

        @Test
        void connection_isKeptForSeveralRequests() throws Exception {
            for (int i = 0; i < 5; i++) {
                assertThat(send("GET", "/health").statusCode()).isEqualTo(200);
            }
        }
    }

    /** The admin handler alone (STYLE 11). */
    @Nested
    class Handler {
        private final EmbeddedChannel ch = new EmbeddedChannel(new AdminServer.AdminHandler(metrics, ready::get, null));

        @AfterEach
        void tearDown() {
            assertThat(ch.finishAndReleaseAll()).isFalse();
        }

        @Test
        void health_releasesRequest() {
            FullHttpRequest req = Embedded.request(HttpMethod.GET, "/health", "");
            ch.writeInbound(req);
            FullHttpResponse r = ch.readOutbound();
            assertThat(r.status().code()).isEqualTo(200);
            assertThat(Embedded.body(r)).isEqualTo("{\"status\":\"ok\"}");
            assertThat(req.refCnt()).isZero();
        }

        @Test
        void metrics_releasesRequest() {
            FullHttpRequest req = Embedded.request(HttpMethod.GET, "/metrics", "");
            ch.writeInbound(req);
            FullHttpResponse r = ch.readOutbound();
            assertThat(r.status().code()).isEqualTo(200);
            assertThat(Embedded.body(r)).contains("gateway_inflight_exchanges 0.0");
            assertThat(req.refCnt()).isZero();
        }

        @Test
        void malformed_is400AndCloses() {
            FullHttpRequest req = Embedded.request(HttpMethod.GET, "/health", "");
            req.setDecoderResult(DecoderResult.failure(new IllegalArgumentException("bad")));
            ch.writeInbound(req);
            FullHttpResponse r = ch.readOutbound();
            assertThat(r.status().code()).isEqualTo(400);
            r.release();
            assertThat(req.refCnt()).isZero();
            assertThat(ch.isOpen()).isFalse();
        }

        @Test
        void notFound_releasesRequest() {
            FullHttpRequest req = Embedded.request(HttpMethod.GET, "/nope", "");
            ch.writeInbound(req);
            FullHttpResponse r = ch.readOutbound();
            assertThat(r.status().code()).isEqualTo(404);
            r.release();
            assertThat(req.refCnt()).isZero();
        }
    }
}
