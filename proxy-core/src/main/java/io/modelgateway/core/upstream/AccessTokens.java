package io.modelgateway.core.upstream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.util.AsciiString;
import io.netty.util.concurrent.EventExecutor;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The OAuth 2.0 access tokens of one credential, sent upstream as {@code Authorization: Bearer}: obtained from the
 * credential's token endpoint by its {@link Grant} (a Google service account's signed JWT,
 * {@link ServiceAccountGrant}), cached, and refreshed before they expire. One per credential, shared by every event
 * loop and kept across reloads of the same credential ({@link #of}).
 *
 * <p>Nothing here blocks an event loop: the token request runs on the JDK HTTP client's own threads, and its result is
 * published through a volatile field. A request reads the current token ({@link #header}) without waiting; when it
 * has less than {@link #REFRESH_BEFORE_SECONDS} left, that read starts the one refresh (a compare-and-set lets only
 * one through) and keeps using the still-valid token. Only when no valid token exists at all (the first request, or
 * after an idle hour) does a request wait ({@link #whenValid}), called back on its own event loop.
 */
final class AccessTokens {
    private static final Logger LOG = Logger.getLogger(AccessTokens.class.getName());
    private static final ConcurrentHashMap<Grant, AccessTokens> BY_GRANT = new ConcurrentHashMap<>();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    /** A token with less than this left is refreshed (Google's and Entra's live about an hour). */
    static final long REFRESH_BEFORE_SECONDS = 300;
    /** A token with less than this left is not sent at all: it could expire on the way. */
    static final long MIN_VALID_SECONDS = 10;
    /** A token whose answer gives no {@code expires_in} is taken to live this long. */
    private static final long LIFETIME_SECONDS = 3600;
    /** After a failed token request, a request does not start another one sooner than this. */
    private static final long RETRY_AFTER_FAILURE_NANOS = 1_000_000_000L;

    /**
     * How one kind of credential asks its token endpoint for a token. Implementations are values: two equal grants
     * (the same credential, say loaded again by a reload) share one {@link AccessTokens}.
     */
    interface Grant {
        /** Where the token request is posted. */
        URI tokenUrl();

        /** The body of one token request ({@code application/x-www-form-urlencoded}); it holds the credential. */
        String form() throws GeneralSecurityException;

        /** Who the tokens are for, in log lines: never a secret. */
        String describe();

        /** The tokens as the caller's error names them, e.g. "the access token of the provider's service account". */
        String tokenName();
    }

    private record Token(AsciiString header, long expiresAtNanos) {
    }

    private final Grant grant;
    private final LongSupplier clock;
    private volatile Token current;
    private final AtomicBoolean refreshing = new AtomicBoolean();
    private volatile long lastFailureNanos;
    private volatile boolean failedBefore;
    /** Why the last token request failed (ours, never the endpoint's bytes or the credential); null before any. */
    private volatile String lastFailure;
    private final Queue<Runnable> waiters = new ConcurrentLinkedQueue<>();

    /**
     * @param clock time in nanoseconds (a test moves it)
     */
    AccessTokens(Grant grant, LongSupplier clock) {
        this.grant = grant;
        this.clock = clock;
    }

    /** The tokens of {@code grant}'s credential, shared process-wide. */
    static AccessTokens of(Grant grant) {
        return BY_GRANT.computeIfAbsent(grant, g -> new AccessTokens(g, System::nanoTime));
    }

    /**
     * The {@code Authorization} value of a token valid for at least {@link #MIN_VALID_SECONDS} more, or null when
     * there is none (then {@link #whenValid}). Starts a refresh, without waiting for it, when the token is near its
     * end. Lock-free: a volatile read and, rarely, a compare-and-set.
     */
    AsciiString header() {
        Token t = current;
        long now = clock.getAsLong();
        long left = t == null ? Long.MIN_VALUE : t.expiresAtNanos - now;
        if (left < REFRESH_BEFORE_SECONDS * 1_000_000_000L) {
            refresh(now);
        }
        return left >= MIN_VALID_SECONDS * 1_000_000_000L ? t.header : null;
    }

    /**
     * Runs {@code ready} with the header on {@code loop} once a valid token exists (at once when one does), or
     * {@code failed} with a reason (never the credential or a token) when the token endpoint refused or could not be
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
                loop.execute(() -> failed.accept(grant.tokenName() + " could not be obtained"
                        + (why == null ? "" : " (" + why + ")")));
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
        try {
            form = grant.form();
        } catch (GeneralSecurityException e) {
            failed(now, "the credential cannot sign (" + e.getClass().getSimpleName() + ")");
            return;
        }
        HttpRequest request = HttpRequest.newBuilder(grant.tokenUrl())
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form))
                .build();
        long sent = clock.getAsLong();
        HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray()).whenComplete((response, error) -> {
            if (error != null) {
                failed(clock.getAsLong(), "the token endpoint could not be reached ("
                        + error.getClass().getSimpleName() + ")");
                return;
            }
            if (response.statusCode() != 200) {
                failed(clock.getAsLong(), "the token endpoint answered " + response.statusCode());
                return;
            }
            try {
                JsonNode root = JSON.readTree(response.body());
                JsonNode token = root == null ? null : root.get("access_token");
                JsonNode expires = root.get("expires_in");
                if (token == null || !token.isTextual() || token.asText().isEmpty()
                        || !token.asText().chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
                    failed(clock.getAsLong(), "the token endpoint's answer holds no usable access_token");
                    return;
                }
                long seconds = expires != null && expires.canConvertToLong() && expires.asLong() > 0
                        ? Math.min(expires.asLong(), 86_400) : LIFETIME_SECONDS;
                current = new Token(new AsciiString("Bearer " + token.asText()), sent + seconds * 1_000_000_000L);
                refreshing.set(false);
                drainWaiters();
            } catch (java.io.IOException | RuntimeException e) {
                failed(clock.getAsLong(), "the token endpoint's answer is not JSON");
            }
        });
    }

    private void failed(long now, String reason) {
        LOG.log(Level.WARNING, grant.describe() + ": " + reason);
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
}
