package io.modelgateway.core.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.config.GoogleSettings;
import io.modelgateway.core.testing.Eventually;
import io.modelgateway.core.testing.GoogleFake;
import io.modelgateway.core.testing.LogLines;
import io.modelgateway.core.testing.ScriptedUpstream;
import io.modelgateway.core.testing.ScriptedUpstream.Script;
import io.netty.channel.DefaultEventLoop;
import io.netty.util.AsciiString;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link AccessTokens} with a service account's grant ({@link ServiceAccountGrant}) against the fake token endpoint
 * (which verifies the grant's RS256 signature with the public half of the key it generated, and is itself checked by
 * Google's auth library in {@code GoogleFakeTest}), on a clock the test moves: a request waits only when no valid
 * token exists; near expiry the current token is used while one refresh runs; an expired token is never sent. Then
 * the same cache against a scripted token endpoint that misbehaves: what it may make the gateway read or repeat is
 * bounded, and a failing endpoint is asked again only after a back-off.
 */
class AccessTokensTest {
    private static final long SECOND = 1_000_000_000L;
    private GoogleFake fake;
    private DefaultEventLoop loop;
    private final AtomicLong now = new AtomicLong(1_000 * SECOND);
    private AccessTokens tokens;

    @BeforeEach
    void setUp() throws Exception {
        fake = GoogleFake.start();
        loop = new DefaultEventLoop();
        tokens = new AccessTokens(new ServiceAccountGrant(new GoogleSettings.ServiceAccount(GoogleFake.CLIENT_EMAIL,
                privateKey(fake.writeServiceAccount(Files.createTempDirectory("tokens"))), "k", fake.tokenUri())),
                now::get);
    }

    /** The private key of a service-account JSON file. */
    private static PrivateKey privateKey(Path serviceAccount) throws Exception {
        String pem = new com.fasterxml.jackson.databind.ObjectMapper().readTree(serviceAccount.toFile())
                .get("private_key").asText().replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        return KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem)));
    }

    @AfterEach
    void tearDown() throws Exception {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        fake.close();
    }

    private AsciiString waitForToken() throws Exception {
        CompletableFuture<AsciiString> got = new CompletableFuture<>();
        tokens.whenValid(loop, got::complete, reason -> got.completeExceptionally(new AssertionError(reason)));
        return got.get(10, TimeUnit.SECONDS);
    }

    @Test
    void noTokenYet_theRequestWaitsForTheGrant_thenEveryoneUsesItWithoutWaiting() throws Exception {
        assertThat((Object) tokens.header()).as("nothing before the first grant").isNull();
        AsciiString first = waitForToken();
        assertThat(first.toString()).startsWith("Bearer ya29.fake-");
        int grants = fake.tokenRequests();
        for (int i = 0; i < 100; i++) {
            assertThat((Object) tokens.header()).isEqualTo(first);
        }
        assertThat(fake.tokenRequests()).as("a fresh token is not refreshed").isEqualTo(grants);
    }

    @Test
    void nearExpiry_theValidTokenIsUsedWhileOneRefreshRuns() throws Exception {
        AsciiString first = waitForToken();
        int grants = fake.tokenRequests();
        now.addAndGet(3600 * SECOND - 200 * SECOND); // 200 s left: inside the refresh window, still valid
        for (int i = 0; i < 50; i++) {
            AsciiString h = tokens.header();
            assertThat((Object) h).as("no request waits while a valid token exists").isNotNull();
        }
        Eventually.until(Duration.ofSeconds(10), () -> !first.equals(tokens.header()));
        assertThat(fake.tokenRequests()).as("one refresh for fifty requests").isEqualTo(grants + 1);
    }

    @Test
    void expired_isNeverSent_theNextRequestWaitsForANewOne() throws Exception {
        AsciiString first = waitForToken();
        now.addAndGet(3600 * SECOND); // expired
        assertThat((Object) tokens.header()).isNull();
        AsciiString second = waitForToken();
        assertThat((Object) second).isNotEqualTo(first);
    }

    @Test
    void aRefusedGrant_failsTheWaitersWithAReason_andIsRetriedLater() throws Exception {
        GoogleFake other = GoogleFake.start();
        try {
            PrivateKey wrongKey = privateKey(other.writeServiceAccount(Files.createTempDirectory("other")));
            AccessTokens bad = new AccessTokens(new ServiceAccountGrant(new GoogleSettings.ServiceAccount(
                    GoogleFake.CLIENT_EMAIL, wrongKey, "k", fake.tokenUri())), now::get);
            CompletableFuture<String> reason = new CompletableFuture<>();
            bad.whenValid(loop, h -> reason.completeExceptionally(new AssertionError("got a token")), reason::complete);
            assertThat(reason.get(10, TimeUnit.SECONDS)).contains("400").doesNotContain("PRIVATE");
            int grants = fake.tokenRequests();
            CompletableFuture<String> again = new CompletableFuture<>();
            bad.whenValid(loop, h -> again.completeExceptionally(new AssertionError()), again::complete);
            again.get(10, TimeUnit.SECONDS);
            assertThat(fake.tokenRequests()).as("no new grant within a second of a refusal").isEqualTo(grants);
            now.addAndGet(2 * SECOND);
            CompletableFuture<String> later = new CompletableFuture<>();
            bad.whenValid(loop, h -> later.completeExceptionally(new AssertionError()), later::complete);
            later.get(10, TimeUnit.SECONDS);
            assertThat(fake.tokenRequests()).as("tried again after the back-off").isEqualTo(grants + 1);
        } finally {
            other.close();
        }
    }

    // ------------------------------------------------------------------ a scripted token endpoint

    /** A grant whose form holds {@link #SECRET}, posted to {@code url}. */
    private record TestGrant(URI tokenUrl) implements AccessTokens.Grant {
        static final String SECRET = "s3cr3t-client-secret-value";

        @Override
        public String form() {
            return "grant_type=client_credentials&client_secret=" + SECRET;
        }

        @Override
        public String describe() {
            return "test client";
        }

        @Override
        public String tokenName() {
            return "the test token";
        }
    }

    /** Answers the token requests from {@code answers} in turn (the last one again when they run out). */
    private static ScriptedUpstream endpoint(Queue<Script> answers) throws InterruptedException {
        return new ScriptedUpstream(r -> answers.size() > 1 ? answers.poll() : answers.peek());
    }

    private static Script token(String json) {
        return Script.json(200, json);
    }

    private String failure(AccessTokens t) throws Exception {
        CompletableFuture<String> reason = new CompletableFuture<>();
        t.whenValid(loop, h -> reason.completeExceptionally(new AssertionError("got " + h)), reason::complete);
        return reason.get(10, TimeUnit.SECONDS);
    }

    private AsciiString valid(AccessTokens t) throws Exception {
        CompletableFuture<AsciiString> got = new CompletableFuture<>();
        t.whenValid(loop, got::complete, why -> got.completeExceptionally(new AssertionError(why)));
        return got.get(10, TimeUnit.SECONDS);
    }

    @Test
    void anAnswerOverTheBound_isAFailure_neverReadWhole() throws Exception {
        String big = "{\"access_token\":\"" + "a".repeat(AccessTokens.MAX_ANSWER_BYTES) + "\",\"expires_in\":3600}";
        try (ScriptedUpstream up = endpoint(new ArrayDeque<>(List.of(token(big))))) {
            AccessTokens t = new AccessTokens(new TestGrant(URI.create(up.baseUrl() + "/token")), now::get);
            assertThat(failure(t)).isEqualTo("the test token could not be obtained (the token endpoint's answer is "
                    + "larger than 64 KiB)");
        }
    }

    @Test
    void aRefusal_namesItsStatusAndOAuthErrorCode_neverTheEndpointsTextOrTheSecret() throws Exception {
        String refusal = "{\"error\":\"invalid_client\",\"error_description\":\"secret " + TestGrant.SECRET
                + " is wrong\"}";
        String oddCode = "{\"error\":\"" + TestGrant.SECRET + " <script>\"}";
        try (ScriptedUpstream up = endpoint(new ArrayDeque<>(List.of(Script.json(401, refusal),
                Script.json(400, oddCode), new Script(503, Map.of(), List.of("down".getBytes()), 0, -1))))) {
            AccessTokens t = new AccessTokens(new TestGrant(URI.create(up.baseUrl() + "/token")), now::get);
            assertThat(failure(t)).isEqualTo("the test token could not be obtained (the token endpoint answered 401 "
                    + "invalid_client)");
            now.addAndGet(60 * SECOND);
            assertThat(failure(t)).as("an error field that is no OAuth code is left out")
                    .isEqualTo("the test token could not be obtained (the token endpoint answered 400)");
            now.addAndGet(60 * SECOND);
            assertThat(failure(t)).isEqualTo("the test token could not be obtained (the token endpoint answered 503)");
            assertThat(up.received.get(0).body()).contains(TestGrant.SECRET);
        }
    }

    @Test
    void answersThatAreNoBearerToken_areFailures() throws Exception {
        try (ScriptedUpstream up = endpoint(new ArrayDeque<>(List.of(token("[1,2]"), token("{\"expires_in\":60}"),
                token("{\"access_token\":\"a b\"}"), token("{\"token_type\":\"pop\",\"access_token\":\"t\"}"))))) {
            AccessTokens t = new AccessTokens(new TestGrant(URI.create(up.baseUrl() + "/token")), now::get);
            assertThat(failure(t)).endsWith("(the token endpoint's answer is not a JSON object)");
            now.addAndGet(60 * SECOND);
            assertThat(failure(t)).endsWith("(the token endpoint's answer holds no usable access_token)");
            now.addAndGet(60 * SECOND);
            assertThat(failure(t)).endsWith("(the token endpoint's answer holds no usable access_token)");
            now.addAndGet(60 * SECOND);
            assertThat(failure(t)).endsWith("(the token endpoint's answer is not a bearer token)");
        }
    }

    @Test
    void expiresInAsAString_isTheTokensLifetime() throws Exception {
        try (ScriptedUpstream up = endpoint(new ArrayDeque<>(List.of(
                token("{\"token_type\":\"Bearer\",\"expires_in\":\"700\",\"access_token\":\"tok-1\"}"))))) {
            AccessTokens t = new AccessTokens(new TestGrant(URI.create(up.baseUrl() + "/token")), now::get);
            assertThat(valid(t).toString()).isEqualTo("Bearer tok-1");
            now.addAndGet(695 * SECOND);
            assertThat((Object) t.header()).as("5 s left of 700: not sent (an hour by default would be)").isNull();
        }
    }

    @Test
    void aFailingRefresh_whileTheTokenIsValid_backsOffAndDoubles_andHonoursRetryAfter() throws Exception {
        Queue<Script> answers = new ArrayDeque<>(List.of(
                token("{\"token_type\":\"Bearer\",\"expires_in\":3600,\"access_token\":\"tok-1\"}"),
                Script.json(500, "{}"), Script.json(502, "{}"),
                new Script(429, Map.of("retry-after", "20"), List.of("{}".getBytes()), 0, -1),
                token("{\"token_type\":\"Bearer\",\"expires_in\":3600,\"access_token\":\"tok-2\"}")));
        try (LogLines log = LogLines.of(AccessTokens.class.getName()); ScriptedUpstream up = endpoint(answers)) {
            List<String> warnings = log.messages;
            AccessTokens t = new AccessTokens(new TestGrant(URI.create(up.baseUrl() + "/token")), now::get);
            AsciiString first = valid(t);
            now.addAndGet(3400 * SECOND); // 200 s left: the next use starts a refresh
            assertThat((Object) t.header()).isEqualTo(first);
            // The failure is logged before the back-off is set: wait for the log, then a moment for the rest.
            Eventually.until(Duration.ofSeconds(10), () -> warnings.size() == 1);
            Eventually.until(Duration.ofSeconds(10), () -> {
                t.header();
                return up.received.size() == 2;
            });
            for (int i = 0; i < 20; i++) {
                assertThat((Object) t.header()).as("the valid token is still sent").isEqualTo(first);
            }
            assertThat(up.received).as("no new request within the first second").hasSize(2);
            now.addAndGet(SECOND);
            Eventually.until(Duration.ofSeconds(10), () -> {
                t.header();
                return warnings.size() == 2;
            });
            assertThat(warnings.get(1)).isEqualTo("test client: the token endpoint answered 502");
            now.addAndGet(SECOND); // the second failure in a row waits 2 s
            t.header();
            assertThat(up.received).as("not yet after 1 s of 2").hasSize(3);
            now.addAndGet(SECOND);
            Eventually.until(Duration.ofSeconds(10), () -> {
                t.header();
                return warnings.size() == 3;
            });
            now.addAndGet(10 * SECOND); // the 429 asked for 20 s, more than the 4 s of a third failure
            t.header();
            assertThat(up.received).as("Retry-After: 20 honoured").hasSize(4);
            now.addAndGet(10 * SECOND);
            Eventually.until(Duration.ofSeconds(10), () -> "Bearer tok-2".equals(String.valueOf(t.header())));
            assertThat(up.received).hasSize(5);
            assertThat(warnings).hasSize(3).noneMatch(w -> w.contains(TestGrant.SECRET));
        }
    }
}
