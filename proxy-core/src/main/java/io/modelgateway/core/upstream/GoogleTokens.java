package io.modelgateway.core.upstream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.config.GoogleSettings.ServiceAccount;
import io.netty.util.AsciiString;
import io.netty.util.concurrent.EventExecutor;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.Signature;
import java.time.Duration;
import java.util.Base64;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The OAuth2 access tokens of one Google service account (Vertex AI), by the signed-JWT grant (RFC 7523): a JWT
 * signed RS256 with the account's key ({@code iss} the account, {@code aud} Google's token endpoint, {@code scope}
 * cloud-platform, one hour) is exchanged at the {@code token_uri} for a bearer token. One per account, shared by
 * every event loop and kept across reloads of the same key ({@link #of}).
 *
 * <p>Nothing here blocks an event loop: the exchange runs on the JDK HTTP client's own threads, and its result is
 * published through a volatile field. A request reads the current token ({@link #header}) without waiting; when it
 * has less than {@link #REFRESH_BEFORE_SECONDS} left, that read starts the one refresh (a compare-and-set lets only
 * one through) and keeps using the still-valid token. Only when no valid token exists at all (the first request, or
 * after an idle hour) does a request wait ({@link #whenValid}), called back on its own event loop.
 */
public final class GoogleTokens {
    private static final Logger LOG = Logger.getLogger(GoogleTokens.class.getName());
    private static final ConcurrentHashMap<ServiceAccount, GoogleTokens> BY_ACCOUNT = new ConcurrentHashMap<>();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    static final String SCOPE = "https://www.googleapis.com/auth/cloud-platform";
    /**
     * The grant's audience: Google's token endpoint, wherever the grant is posted (Google's own auth library does the
     * same; a key's {@code token_uri} only says where to post).
     */
    static final String AUDIENCE = "https://oauth2.googleapis.com/token";
    /** A token with less than this left is refreshed (Google's live an hour). */
    static final long REFRESH_BEFORE_SECONDS = 300;
    /** A token with less than this left is not sent at all: it could expire on the way. */
    static final long MIN_VALID_SECONDS = 10;
    private static final long LIFETIME_SECONDS = 3600;
    /** After a failed exchange, a request does not start another one sooner than this. */
    private static final long RETRY_AFTER_FAILURE_NANOS = 1_000_000_000L;

    private record Token(AsciiString header, long expiresAtNanos) {
    }

    private final ServiceAccount account;
    private final Clock clock;
    private volatile Token current;
    private final AtomicBoolean refreshing = new AtomicBoolean();
    private volatile long lastFailureNanos;
    private volatile boolean failedBefore;
    /** Why the last grant failed (ours, never the endpoint's bytes or the key); null before any failure. */
    private volatile String lastFailure;
    private final Queue<Runnable> waiters = new ConcurrentLinkedQueue<>();

    /** Time in nanoseconds (a test moves it). */
    interface Clock {
        long nanoTime();
    }

    GoogleTokens(ServiceAccount account, Clock clock) {
        this.account = account;
        this.clock = clock;
    }

    /** The tokens of {@code account}, shared process-wide. */
    static GoogleTokens of(ServiceAccount account) {
        return BY_ACCOUNT.computeIfAbsent(account, a -> new GoogleTokens(a, System::nanoTime));
    }

    /**
     * The {@code Authorization} value of a token valid for at least {@link #MIN_VALID_SECONDS} more, or null when
     * there is none (then {@link #whenValid}). Starts a refresh, without waiting for it, when the token is near its
     * end. Lock-free: a volatile read and, rarely, a compare-and-set.
     */
    AsciiString header() {
        Token t = current;
        long now = clock.nanoTime();
        long left = t == null ? Long.MIN_VALUE : t.expiresAtNanos - now;
        if (left < REFRESH_BEFORE_SECONDS * 1_000_000_000L) {
            refresh(now);
        }
        return left >= MIN_VALID_SECONDS * 1_000_000_000L ? t.header : null;
    }

    /**
     * Runs {@code ready} with the header on {@code loop} once a valid token exists (at once when one does), or
     * {@code failed} with a reason (never the key or a token) when the token endpoint refused or could not be
     * reached.
     */
    void whenValid(EventExecutor loop, Consumer<AsciiString> ready, Consumer<String> failed) {
        AsciiString h = header();
        if (h != null) {
            ready.accept(h);
            return;
        }
        waiters.add(() -> {
            AsciiString now = header();
            if (now != null) {
                loop.execute(() -> ready.accept(now));
            } else {
                String why = lastFailure;
                loop.execute(() -> failed.accept("the access token of the provider's service account could not be "
                        + "obtained" + (why == null ? "" : " (" + why + ")")));
            }
        });
        // header() starts the refresh if none runs; one that ended between the first check and the add has already
        // drained the queue, so when none runs now (or a token came), the waiters are run here.
        if (header() != null || !refreshing.get()) {
            drainWaiters();
        }
    }

    private void refresh(long now) {
        if (failedBefore && now - lastFailureNanos < RETRY_AFTER_FAILURE_NANOS && current == null) {
            return;
        }
        if (!refreshing.compareAndSet(false, true)) {
            return;
        }
        String form;
        long nowSeconds = System.currentTimeMillis() / 1000;
        try {
            form = "grant_type=" + URLEncoder.encode("urn:ietf:params:oauth:grant-type:jwt-bearer",
                    StandardCharsets.UTF_8) + "&assertion=" + assertion(account, nowSeconds);
        } catch (GeneralSecurityException e) {
            failed(now, "the service account's key cannot sign (" + e.getClass().getSimpleName() + ")");
            return;
        }
        HttpRequest request = HttpRequest.newBuilder(URI.create(account.tokenUri()))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form))
                .build();
        long sent = clock.nanoTime();
        HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray()).whenComplete((response, error) -> {
            if (error != null) {
                failed(clock.nanoTime(), "the token endpoint could not be reached (" + error.getClass().getSimpleName()
                        + ")");
                return;
            }
            if (response.statusCode() != 200) {
                failed(clock.nanoTime(), "the token endpoint answered " + response.statusCode());
                return;
            }
            try {
                JsonNode root = JSON.readTree(response.body());
                JsonNode token = root == null ? null : root.get("access_token");
                JsonNode expires = root.get("expires_in");
                if (token == null || !token.isTextual() || token.asText().isEmpty()
                        || !token.asText().chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
                    failed(clock.nanoTime(), "the token endpoint's answer holds no usable access_token");
                    return;
                }
                long seconds = expires != null && expires.canConvertToLong() && expires.asLong() > 0
                        ? Math.min(expires.asLong(), 86_400) : LIFETIME_SECONDS;
                current = new Token(new AsciiString("Bearer " + token.asText()), sent + seconds * 1_000_000_000L);
                refreshing.set(false);
                drainWaiters();
            } catch (java.io.IOException | RuntimeException e) {
                failed(clock.nanoTime(), "the token endpoint's answer is not JSON");
            }
        });
    }

    private void failed(long now, String reason) {
        LOG.log(Level.WARNING, "service account " + account.clientEmail() + ": " + reason);
        lastFailure = reason;
        lastFailureNanos = now;
        failedBefore = true;
        refreshing.set(false);
        drainWaiters();
    }

    private void drainWaiters() {
        Runnable r;
        while ((r = waiters.poll()) != null) {
            r.run();
        }
    }

    /**
     * The signed JWT of the grant, issued at {@code nowSeconds}: base64url of the header, of the claims, and of the
     * RS256 signature of the two.
     */
    public static String assertion(ServiceAccount account, long nowSeconds) throws GeneralSecurityException {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        StringBuilder header = new StringBuilder(64).append("{\"alg\":\"RS256\",\"typ\":\"JWT\"");
        if (account.privateKeyId() != null) {
            header.append(",\"kid\":");
            jsonString(header, account.privateKeyId());
        }
        header.append('}');
        StringBuilder claims = new StringBuilder(256).append("{\"iss\":");
        jsonString(claims, account.clientEmail());
        claims.append(",\"scope\":\"").append(SCOPE).append("\",\"aud\":\"").append(AUDIENCE).append('"');
        claims.append(",\"iat\":").append(nowSeconds).append(",\"exp\":").append(nowSeconds + LIFETIME_SECONDS)
                .append('}');
        String signingInput = b64.encodeToString(header.toString().getBytes(StandardCharsets.UTF_8)) + '.'
                + b64.encodeToString(claims.toString().getBytes(StandardCharsets.UTF_8));
        Signature rsa = Signature.getInstance("SHA256withRSA");
        rsa.initSign(account.privateKey());
        rsa.update(signingInput.getBytes(StandardCharsets.US_ASCII));
        return signingInput + '.' + b64.encodeToString(rsa.sign());
    }

    private static void jsonString(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }
}
