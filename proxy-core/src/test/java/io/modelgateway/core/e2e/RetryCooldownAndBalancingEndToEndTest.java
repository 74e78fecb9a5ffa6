package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.config.DeploymentConfig;
import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.route.Routing;
import io.modelgateway.core.simulator.SimulatorServer;
import io.modelgateway.core.testing.Eventually;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.TestGateway;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The state routing keeps across requests, end to end: a deployment cooling down after failures (then probed),
 * least-in-flight balancing of concurrent streams, and a client leaving during a backoff. Timing is asserted with
 * wide margins only (a cool-down of 2 s is checked within its first second, and after it is surely over).
 */
class RetryCooldownAndBalancingEndToEndTest {
    private static final String CHAT = "/api/v1/chat/completions";
    private static final String UPSTREAM_KEY = "sk-upstream-cooldown-key";
    private static final String HELLO = "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]";

    private static SimulatorServer sim;
    private static TestGateway gw;
    private static final RecordingObserver records = new RecordingObserver();
    private static final List<String> upstream = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        sim = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, UPSTREAM_KEY,
                req -> upstream.add(String.valueOf(req.headers().get("x-deployment"))));
        String b = "http://127.0.0.1:" + sim.port();
        gw = TestGateway.start("""
                keys:
                  - name: test
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                providers:
                  sim: {type: simulator, forward_headers: ["x-sim-*"]}
                  # Fails while the caller sends x-sim-fault (only this provider forwards it).
                  cd-flaky: {type: openai, base_url: "%1$s/v1", api_key: %2$s, forward_headers: ["x-sim-fault"],
                             cooldown: {failures: 2, seconds: 2}, headers: {x-deployment: cd-flaky}}
                  cd-good: {type: openai, base_url: "%1$s/v1", api_key: %2$s, cooldown: off,
                            headers: {x-deployment: cd-good}}
                  bo-429: {type: openai, base_url: "%1$s/v1", api_key: %2$s, cooldown: off,
                           headers: {x-deployment: bo-429, x-sim-fault: "status=429,retry_after=1"}}
                models:
                  cd:
                    retries: {max: 2, backoff_ms: 1, max_backoff_ms: 10}
                    deployments: [{provider: cd-flaky, model: sim-chat-1, weight: 1000}, {provider: cd-good, model: sim-chat-1}]
                  bo: {deployments: [{provider: bo-429, model: sim-chat-1}]}
                  lb:
                    strategy: least_inflight
                    deployments: [{provider: sim, model: sim-a}, {provider: sim, model: sim-b}]
                  plain: {deployments: [{provider: sim, model: plain-1}]}
                """.formatted(b, UPSTREAM_KEY), records);
    }

    @AfterAll
    static void stop() {
        gw.close();
        sim.close();
    }

    @BeforeEach
    void clear() {
        records.clear();
        upstream.clear();
    }

    private static long count(String deployment) {
        return upstream.stream().filter(deployment::equals).count();
    }

    private static Routing routing() {
        return gw.server().context().routing();
    }

    private static DeploymentConfig deployment(String model, int i) {
        return gw.server().context().config().model(model).deployments().get(i);
    }

    /** A request to model cd that must succeed; with the flaky deployment failing when {@code fault}. */
    private static void callCd(boolean fault) throws Exception {
        String body = "{\"model\":\"cd\"," + HELLO + "}";
        HttpResponse<String> r = fault ? gw.call(CHAT, body, "x-sim-fault", "status=503") : gw.call(CHAT, body);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(records.next().outcome()).isEqualTo(Outcome.DONE);
    }

    private static void assertStillServing() throws Exception {
        assertThat(gw.call(CHAT, "{\"model\":\"plain\"," + HELLO + "}").statusCode()).isEqualTo(200);
        assertThat(records.next().outcome()).isEqualTo(Outcome.DONE);
    }

    @Test
    void cooldown_afterNFailuresNoTraffic_thenOneProbe_andASuccessfulProbeBringsItBack() throws Exception {
        // Failures until the flaky deployment has failed twice (its weight makes it first almost every time);
        // every caller still gets a 200 from the good one.
        for (int i = 0; count("cd-flaky") < 2; i++) {
            assertThat(i).as("requests until two failures").isLessThan(50);
            callCd(true);
        }
        long opened = System.nanoTime();
        assertThat(routing().health(deployment("cd", 0)).consecutiveFailures()).isEqualTo(2);

        // Cooling down: within its first second, no request reaches it, whatever the weights say.
        int during = 0;
        while (System.nanoTime() - opened < 1_000_000_000L) {
            callCd(true);
            during++;
        }
        assertThat(during).isGreaterThanOrEqualTo(3);
        assertThat(count("cd-flaky")).as("no traffic while cooling down").isEqualTo(2);

        // Over: one probe goes through; it fails, so it cools down again and the others skip it.
        sleepUntil(opened, 2_300);
        long reopened = System.nanoTime();
        for (int i = 0; i < 5; i++) {
            callCd(true);
        }
        assertThat(count("cd-flaky")).as("exactly one probe").isEqualTo(3);

        // Over again, and the upstream recovered: the probe succeeds, and the deployment takes traffic again.
        sleepUntil(reopened, 2_300);
        upstream.clear();
        for (int i = 0; i < 5; i++) {
            callCd(false);
        }
        assertThat(count("cd-flaky")).as("back in rotation (weight 1000 : 1)").isGreaterThanOrEqualTo(4);
        assertThat(routing().health(deployment("cd", 0)).consecutiveFailures()).isZero();
        assertStillServing();
    }

    @Test
    void leastInflight_spreadsConcurrentSlowStreamsAcrossDeployments() throws Exception {
        String body = "{\"model\":\"lb\",\"stream\":true," + HELLO + "}";
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            HttpRequest req = gw.post(CHAT, body).header("authorization", "Bearer " + TestGateway.KEY)
                    .header("x-sim-tps", "10").header("x-sim-output-tokens", "10").build();
            calls.add(gw.http.sendAsync(req, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8)));
        }
        for (CompletableFuture<HttpResponse<String>> c : calls) {
            HttpResponse<String> r = c.get();
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).endsWith("data: [DONE]\n\n");
        }
        List<ExchangeRecord> recs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            recs.add(records.next());
        }
        Map<String, Long> perDeployment = recs.stream()
                .collect(Collectors.groupingBy(ExchangeRecord::deployment, Collectors.counting()));
        assertThat(perDeployment).containsOnly(Map.entry("sim-a", 2L), Map.entry("sim-b", 2L));
        assertThat(recs).allSatisfy(r -> assertThat(r.outcome()).isEqualTo(Outcome.DONE));
        assertThat(routing().health(deployment("lb", 0)).inFlight()).isZero();
        assertThat(routing().health(deployment("lb", 1)).inFlight()).isZero();
        assertStillServing();
    }

    @Test
    void clientDisconnectsDuringBackoff_noFurtherUpstreamRequest_exchangeCancelled() throws Exception {
        String body = "{\"model\":\"bo\"," + HELLO + "}";
        try (Socket client = new Socket("127.0.0.1", gw.port())) {
            OutputStream out = client.getOutputStream();
            out.write(("POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TestGateway.KEY
                    + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body)
                    .getBytes(StandardCharsets.UTF_8));
            out.flush();
            // The 429 came back with Retry-After: 1, so the gateway now waits a second before asking again.
            Eventually.until(Duration.ofSeconds(5), () -> count("bo-429") == 1);
            Thread.sleep(100);
        }
        ExchangeRecord rec = records.next();
        assertThat(rec.outcome()).isEqualTo(Outcome.CANCELLED);
        assertThat(rec.attempts()).isEqualTo(1);
        assertThat(rec.status()).as("nothing was answered").isZero();
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.NONE);
        Thread.sleep(1500); // past the Retry-After, and any backoff
        assertThat(upstream).as("no upstream request after the client left").containsExactly("bo-429");
        assertThat(routing().health(deployment("bo", 0)).inFlight()).isZero();
        assertStillServing();
    }

    private static void sleepUntil(long startNanos, long millis) throws InterruptedException {
        long left = millis - (System.nanoTime() - startNanos) / 1_000_000;
        if (left > 0) {
            Thread.sleep(left);
        }
    }
}
