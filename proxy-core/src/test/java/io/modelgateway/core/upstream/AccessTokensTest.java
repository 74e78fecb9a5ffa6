package io.modelgateway.core.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.config.GoogleSettings;
import io.modelgateway.core.testing.Eventually;
import io.modelgateway.core.testing.GoogleFake;
import io.netty.channel.DefaultEventLoop;
import io.netty.util.AsciiString;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
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
 * token exists; near expiry the current token is used while one refresh runs; an expired token is never sent.
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
        Path sa = fake.writeServiceAccount(Files.createTempDirectory("tokens"));
        com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(sa.toFile());
        String pem = json.get("private_key").asText().replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        PrivateKey key = KeyFactory.getInstance("RSA").generatePrivate(
                new PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem)));
        tokens = new AccessTokens(new ServiceAccountGrant(
                new GoogleSettings.ServiceAccount(GoogleFake.CLIENT_EMAIL, key, "k", fake.tokenUri())), now::get);
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
            Path sa = other.writeServiceAccount(Files.createTempDirectory("other"));
            com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper()
                    .readTree(sa.toFile());
            String pem = json.get("private_key").asText().replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
            PrivateKey wrongKey = KeyFactory.getInstance("RSA").generatePrivate(
                    new PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem)));
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
}
