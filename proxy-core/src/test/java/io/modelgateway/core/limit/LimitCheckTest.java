package io.modelgateway.core.limit;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.json.RequestPeek;
import io.modelgateway.core.config.ConfigLoader;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.exchange.Admission;
import io.modelgateway.core.exchange.ExchangeObserver;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.server.GatewayContext;
import io.modelgateway.core.testing.Embedded;
import io.modelgateway.core.testing.TestGateway;
import io.modelgateway.core.upstream.UpstreamPools;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.concurrent.Promise;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The request step that admits a request against its limits, alone on an EmbeddedChannel: the local limits decided
 * at once, and the shared ones whose answer comes later (played by hand: each test completes the answer when its
 * story needs it), including a client that leaves while its request waits.
 */
class LimitCheckTest {
    private static final String CHAT = "{\"model\":\"sim-chat\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    private final List<ExchangeRecord> ended = new CopyOnWriteArrayList<>();
    private GatewayContext context;
    private EmbeddedChannel ch;
    /** The answers the stand-in for the shared limits has handed out, in order. */
    private final List<Promise<Admission>> answers = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        String yaml = TestGateway.simulatorConfig().replace("""
                    models: ["*"]
                """, """
                    models: ["*"]
                    limits: {requests_per_minute: 2}
                """);
        context = new GatewayContext(ConfigLoader.parse(yaml, "test.yaml", Map.of("GATEWAY_KEY", TestGateway.KEY),
                "127.0.0.1:0"), new UpstreamPools(), new RateLimiter(), new ExchangeObserver() {
                    @Override
                    public void started(ExchangeRecord record) {
                    }

                    @Override
                    public void ended(ExchangeRecord record) {
                        ended.add(record);
                    }
                });
        ch = new EmbeddedChannel(new LimitCheck(context.limiters(), context.exchanges()));
    }

    @AfterEach
    void tearDown() {
        assertThat(ch.finishAndReleaseAll()).isFalse();
        context.pools().close();
    }

    /** A request as it reaches the step: authenticated, peeked, its model resolved. */
    private GatewayRequest request() {
        GatewayRequest r = Embedded.apiRequest(context, Endpoint.CHAT_COMPLETIONS, CHAT);
        r.key(context.config().findKey(KeyConfig.sha256(TestGateway.KEY)));
        r.peek(RequestPeek.peek(Endpoint.CHAT_COMPLETIONS, r.body(), false));
        r.model(context.config().model("sim-chat"));
        return r;
    }

    /** Shared limits whose every answer waits until the test completes it. */
    private void sharedLimitsAnsweringLater() {
        context.limiters().checkWith((key, model, estimate, cost, loop) -> {
            Promise<Admission> p = loop.newPromise();
            answers.add(p);
            return p;
        });
    }

    @Test
    void withinTheLimit_goesOnWithItsAdmission_pastIt429InStyle() {
        for (int i = 0; i < 2; i++) {
            ch.writeInbound(request());
            GatewayRequest admitted = ch.readInbound();
            assertThat(admitted.admission().admitted()).isTrue();
            context.end(admitted, Outcome.DONE); // settles the reservation
            admitted.release();
        }
        GatewayRequest third = request();
        ch.writeInbound(third);
        assertThat((Object) ch.readInbound()).isNull();
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(429);
        assertThat(r.headers().get("retry-after")).isNotNull();
        assertThat(Embedded.body(r)).contains("\"type\":\"requests\"").contains("rate_limit_exceeded");
        assertThat(third.refCnt()).isZero();
        assertThat(third.record().outcome()).isEqualTo(Outcome.LIMITED);
        assertThat(third.record().limit()).isEqualTo("requests_per_minute");
    }

    @Test
    void sharedAnswerLater_requestHeldUntilItComes_thenGoesOnWithIt() {
        sharedLimitsAnsweringLater();
        GatewayRequest request = request();

        ch.writeInbound(request);
        Object passedWhileWaiting = ch.readInbound();
        Object answeredWhileWaiting = ch.readOutbound();
        CountingAdmission admitted = new CountingAdmission(true);
        answers.get(0).setSuccess(admitted);
        GatewayRequest passed = ch.readInbound();

        assertThat(passedWhileWaiting).isNull();
        assertThat(answeredWhileWaiting).isNull();
        assertThat(passed).isSameAs(request);
        assertThat(passed.admission()).isSameAs(admitted);
        assertThat(passed.estimatedInputTokens()).isEqualTo(CHAT.length() / 4);
        assertThat((Object) ch.readOutbound()).isNull();
        context.end(passed, Outcome.DONE);
        passed.release();
        assertThat(admitted.settled).containsExactly(0L);
    }

    @Test
    void sharedAnswerLater_refused_429InStyleWithItsHeaders() {
        sharedLimitsAnsweringLater();
        GatewayRequest request = request();
        ch.writeInbound(request);

        answers.get(0).setSuccess(new CountingAdmission(false));
        FullHttpResponse r = ch.readOutbound();

        assertThat(r.status().code()).isEqualTo(429);
        assertThat(r.headers().get("retry-after")).isEqualTo("7");
        assertThat(r.headers().get("x-request-id")).isEqualTo("req_x");
        assertThat(Embedded.body(r)).contains("Shared limit reached");
        assertThat((Object) ch.readInbound()).isNull();
        assertThat(request.refCnt()).isZero();
        assertThat(request.record().outcome()).isEqualTo(Outcome.LIMITED);
        assertThat(request.record().limit()).isEqualTo("requests_per_minute");
        assertThat(ended).hasSize(1);
    }

    @Test
    void sharedAnswerAtOnce_decidedWithoutHolding() {
        CountingAdmission admitted = new CountingAdmission(true);
        context.limiters().checkWith((key, model, estimate, cost, loop) -> loop.newSucceededFuture(admitted));

        ch.writeInbound(request());
        GatewayRequest passed = ch.readInbound();

        assertThat(passed.admission()).isSameAs(admitted);
        context.end(passed, Outcome.DONE);
        passed.release();
    }

    @Test
    void clientLeavesWhileHeld_requestEndedAndReleasedOnce_lateAdmissionSettledOnceUnused() {
        sharedLimitsAnsweringLater();
        GatewayRequest request = request();
        ch.writeInbound(request);

        ch.close();
        int refCntAfterClose = request.refCnt();
        CountingAdmission late = new CountingAdmission(true);
        answers.get(0).setSuccess(late);

        assertThat(refCntAfterClose).isZero();
        assertThat(request.record().outcome()).isEqualTo(Outcome.CANCELLED);
        assertThat(ended).containsExactly(request.record());
        assertThat(late.settled).as("what Redis reserved for it is given back, once").containsExactly(0L);
        assertThat((Object) ch.readInbound()).isNull();
        assertThat((Object) ch.readOutbound()).isNull();
    }

    @Test
    void clientLeavesWhileHeld_refusalComesLate_nothingAnswered() {
        sharedLimitsAnsweringLater();
        GatewayRequest request = request();
        ch.writeInbound(request);

        ch.close();
        CountingAdmission refused = new CountingAdmission(false);
        answers.get(0).setSuccess(refused);

        assertThat(request.refCnt()).isZero();
        assertThat(ended).hasSize(1);
        assertThat(refused.settled).containsExactly(0L); // a refusal's settle changes nothing
        assertThat((Object) ch.readOutbound()).isNull();
    }

    @Test
    void answerArrivesAfterTheConnectionClosed_butBeforeTheStepHeardOfIt_endedOnceAndSettledByTheEnd() {
        sharedLimitsAnsweringLater();
        CountingAdmission admitted = new CountingAdmission(true);
        // A handler in front that, hearing of the close first, completes the answer before the step hears of it.
        ch.pipeline().addFirst(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                answers.get(0).setSuccess(admitted);
                ctx.fireChannelInactive();
            }
        });
        GatewayRequest request = request();
        ch.writeInbound(request);

        ch.close();

        assertThat(request.refCnt()).isZero();
        assertThat(request.record().outcome()).isEqualTo(Outcome.CANCELLED);
        assertThat(request.admission()).isSameAs(admitted);
        assertThat(ended).containsExactly(request.record());
        assertThat(admitted.settled).containsExactly(0L);
        assertThat((Object) ch.readInbound()).isNull();
    }

    @Test
    void secondRequestWhileOneIsHeld_isRefusedAsTheGatewaysFault_theFirstStillWaits() {
        sharedLimitsAnsweringLater();
        GatewayRequest first = request();
        GatewayRequest second = request();
        ch.writeInbound(first);

        ch.writeInbound(second);
        FullHttpResponse r = ch.readOutbound();
        answers.get(0).setSuccess(Admission.UNLIMITED);
        GatewayRequest passed = ch.readInbound();

        assertThat(r.status().code()).isEqualTo(500);
        r.release();
        assertThat(second.refCnt()).isZero();
        assertThat(answers).hasSize(1);
        assertThat(passed).isSameAs(first);
        context.end(passed, Outcome.DONE);
        passed.release();
    }

    /** An admission that records each settlement it is given; refused, it refuses as a requests limit would. */
    private static final class CountingAdmission extends Admission {
        final boolean admitted;
        final List<Long> settled = new ArrayList<>();

        CountingAdmission(boolean admitted) {
            this.admitted = admitted;
        }

        @Override
        public boolean admitted() {
            return admitted;
        }

        @Override
        public GatewayError error() {
            return admitted ? null : GatewayError.of(io.modelgateway.codecs.error.ErrorKind.RATE_LIMIT,
                    "Shared limit reached.");
        }

        @Override
        public long retryAfterMillis() {
            return admitted ? 0 : 7000;
        }

        @Override
        public String refusedLimit() {
            return admitted ? null : "requests_per_minute";
        }

        @Override
        public void addHeaders(HttpHeaders headers, ApiStyle style) {
            if (!admitted) {
                RateLimitHeaders.writeRetry(headers, 7000, true);
            }
        }

        @Override
        public void settle(long actualTokens) {
            settled.add(actualTokens);
        }
    }
}
