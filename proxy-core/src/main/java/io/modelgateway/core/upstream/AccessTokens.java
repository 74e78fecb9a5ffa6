package io.modelgateway.core.upstream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.util.AsciiString;
import io.netty.util.concurrent.EventExecutor;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.regex.Pattern;

/**
 * The OAuth 2.0 access tokens of one credential, sent upstream as {@code Authorization: Bearer}: obtained from the
 * credential's token endpoint by its {@link Grant} (a Google service account's signed JWT,
 * {@link ServiceAccountGrant}; a Microsoft Entra ID application's client credentials, {@link EntraGrant}), cached, and
 * refreshed before they expire. One per credential, shared by every event loop and kept across reloads of the same
 * credential ({@link #of}).
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
    /** The longest {@code expires_in} believed: a longer one is refreshed after this anyway. */
    private static final long MAX_LIFETIME_SECONDS = 86_400;
    /**
     * After a failed token request no other starts sooner than this; the wait doubles with each failure in a row up
     * to {@link #MAX_BACKOFF_NANOS}, or is what the endpoint's {@code Retry-After} asks, within that bound.
     */
    private static final long FIRST_BACKOFF_NANOS = 1_000_000_000L;
    private static final long MAX_BACKOFF_NANOS = 30_000_000_000L;
    /** The largest token answer read (design rule 8): a token endpoint is a peer too. */
    static final int MAX_ANSWER_BYTES = 64 * 1024;
    /** An OAuth 2.0 error code (RFC 6749 5.2) as it may be repeated to a caller: nothing else of the answer is. */
    private static final Pattern OAUTH_ERROR = Pattern.compile("[a-z_]{1,64}");

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

        /**
         * What a refusal's JSON body says that may be repeated to a caller and a log: by default its OAuth error
         * code ({@code invalid_grant}, {@code invalid_client}, …) when it has a plausible one, else "". Never free
         * text from the endpoint, which may quote what was sent.
         */
        default String refusal(JsonNode body) {
            return oauthError(body);
        }
    }

    private record Token(AsciiString header, long expiresAtNanos) {
    }

    private final Grant grant;
    private final LongSupplier clock;
    private volatile Token current;
    /**
     * The token request under way, null when none: it completes with null when a token came, else with why not. Only
     * one runs at a time (a compare-and-set starts it), and a waiting request is told the outcome of the one it saw.
     */
    private final AtomicReference<CompletableFuture<String>> underWay = new AtomicReference<>();
    /** Token requests that failed in a row; written only by the one under way. */
    private volatile int failures;
    /** With {@link #failures}: no token request starts before this. */
    private volatile long retryAtNanos;
    /** Why the last token request failed (ours, never the endpoint's bytes or the credential); null before any. */
    private volatile String lastFailure;

    /**
     * @param clock time in nanoseconds (a test moves it)
     */
    AccessTokens(Grant grant, LongSupplier clock) {
        this.grant = grant;
        this.clock = clock;
    }

    /** The tokens of {@code grant}'s credential, shared process-wide. */
    static AccessTokens of(Grant grant) {
        return of(grant, System::nanoTime);
    }

    /** As {@link #of(Grant)}; made on {@code clock} when made now (a test moves a gateway's time so). */
    static AccessTokens of(Grant grant, LongSupplier clock) {
        return BY_GRANT.computeIfAbsent(grant, g -> new AccessTokens(g, clock));
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

    /** As {@link #header}, without starting a refresh. */
    private AsciiString valid() {
        Token t = current;
        return t != null && t.expiresAtNanos - clock.getAsLong() >= MIN_VALID_SECONDS * 1_000_000_000L ? t.header
                : null;
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
        CompletableFuture<String> attempt = underWay.get();
        if (attempt == null) {
            // None runs: backed off after a failure, or the one header() started has already ended.
            answer(loop, ready, failed, lastFailure);
        } else {
            attempt.thenAccept(why -> answer(loop, ready, failed, why));
        }
    }

    private void answer(EventExecutor loop, Consumer<AsciiString> ready, Consumer<String> failed, String why) {
        AsciiString h = valid();
        if (h != null) {
            loop.execute(() -> ready.accept(h));
        } else {
            loop.execute(() -> failed.accept(grant.tokenName() + " could not be obtained"
                    + (why == null ? "" : " (" + why + ")")));
        }
    }

    private void refresh(long now) {
        // Backed off after a failure, whether or not a token is still valid: a failing endpoint is not asked again
        // by every request that sees the token near its end.
        if (failures > 0 && now - retryAtNanos < 0) {
            return;
        }
        CompletableFuture<String> attempt = new CompletableFuture<>();
        if (!underWay.compareAndSet(null, attempt)) {
            return;
        }
        try {
            HttpRequest request = HttpRequest.newBuilder(grant.tokenUrl())
                    .timeout(Duration.ofSeconds(30))
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .header("Accept", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(grant.form()))
                    .build();
            long sent = clock.getAsLong();
            HTTP.sendAsync(request, info -> new BoundedBody())
                    .whenComplete((response, error) -> answered(attempt, sent, response, error));
        } catch (GeneralSecurityException | RuntimeException e) {
            failed(attempt, now, "the token request could not be made (" + e.getClass().getSimpleName() + ")", 0);
        }
    }

    /** On the HTTP client's thread: the token endpoint's answer to {@code attempt}, sent at {@code sent}. */
    private void answered(CompletableFuture<String> attempt, long sent, HttpResponse<byte[]> response,
            Throwable error) {
        long now = clock.getAsLong();
        try {
            if (error != null) {
                Throwable cause = error instanceof CompletionException && error.getCause() != null
                        ? error.getCause() : error;
                failed(attempt, now, cause instanceof AnswerTooLarge
                        ? "the token endpoint's answer is larger than " + MAX_ANSWER_BYTES / 1024 + " KiB"
                        : "the token endpoint could not be reached (" + cause.getClass().getSimpleName() + ")", 0);
                return;
            }
            JsonNode root;
            try {
                root = JSON.readTree(response.body());
            } catch (java.io.IOException e) {
                root = null;
            }
            if (response.statusCode() != 200) {
                String why = root == null ? "" : grant.refusal(root);
                failed(attempt, now, "the token endpoint answered " + response.statusCode()
                        + (why.isEmpty() ? "" : " " + why), retryAfterSeconds(response));
                return;
            }
            if (root == null || !root.isObject()) {
                failed(attempt, now, "the token endpoint's answer is not a JSON object", 0);
                return;
            }
            JsonNode token = root.get("access_token");
            JsonNode type = root.get("token_type");
            if (token == null || !token.isTextual() || token.asText().isEmpty()
                    || !token.asText().chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
                failed(attempt, now, "the token endpoint's answer holds no usable access_token", 0);
                return;
            }
            if (type != null && !type.asText().equalsIgnoreCase("Bearer")) {
                failed(attempt, now, "the token endpoint's answer is not a bearer token", 0);
                return;
            }
            long seconds = Math.min(expiresIn(root.get("expires_in")), MAX_LIFETIME_SECONDS);
            current = new Token(new AsciiString("Bearer " + token.asText()), sent + seconds * 1_000_000_000L);
            failures = 0;
            underWay.compareAndSet(attempt, null);
            attempt.complete(null);
        } catch (RuntimeException e) {
            // Whatever went wrong, the attempt ends: a request under way forever would hold every waiter.
            failed(attempt, now, "the token endpoint's answer could not be read (" + e.getClass().getSimpleName()
                    + ")", 0);
        }
    }

    /**
     * {@code expires_in} in seconds: a positive number, or a string of digits (Microsoft's older endpoints send one,
     * and its own library reads both); {@link #LIFETIME_SECONDS} when absent or unusable.
     */
    private static long expiresIn(JsonNode expires) {
        if (expires != null && expires.isTextual() && expires.asText().matches("[0-9]{1,9}")) {
            long seconds = Long.parseLong(expires.asText());
            return seconds > 0 ? seconds : LIFETIME_SECONDS;
        }
        return expires != null && expires.isIntegralNumber() && expires.canConvertToLong() && expires.asLong() > 0
                ? expires.asLong() : LIFETIME_SECONDS;
    }

    /** The refusal's {@code Retry-After} in seconds (delta form only), or 0. */
    private static long retryAfterSeconds(HttpResponse<?> response) {
        String v = response.headers().firstValue("retry-after").orElse("").strip();
        return v.matches("[0-9]{1,6}") ? Long.parseLong(v) : 0;
    }

    /** A refusal's OAuth 2.0 {@code error} code when it looks like one, else "". */
    static String oauthError(JsonNode body) {
        JsonNode error = body.get("error");
        return error != null && error.isTextual() && OAUTH_ERROR.matcher(error.asText()).matches() ? error.asText()
                : "";
    }

    private void failed(CompletableFuture<String> attempt, long now, String reason, long retryAfterSeconds) {
        LOG.log(Level.WARNING, grant.describe() + ": " + reason);
        int n = failures + 1;
        long backoff = Math.min(MAX_BACKOFF_NANOS, FIRST_BACKOFF_NANOS << Math.min(n - 1, 30));
        backoff = Math.max(backoff, Math.min(MAX_BACKOFF_NANOS, retryAfterSeconds * 1_000_000_000L));
        lastFailure = reason;
        retryAtNanos = now + backoff;
        failures = n;
        underWay.compareAndSet(attempt, null);
        attempt.complete(reason);
    }

    /** The token answer was over {@link #MAX_ANSWER_BYTES}. */
    private static final class AnswerTooLarge extends java.io.IOException {
        AnswerTooLarge() {
            super("token answer over " + MAX_ANSWER_BYTES + " bytes");
        }
    }

    /**
     * Collects the token endpoint's answer on the HTTP client's thread, up to {@link #MAX_ANSWER_BYTES}: past that it
     * cancels the answer and fails with {@link AnswerTooLarge}, whatever the endpoint still sends.
     */
    private static final class BoundedBody implements HttpResponse.BodySubscriber<byte[]> {
        private final CompletableFuture<byte[]> body = new CompletableFuture<>();
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private Flow.Subscription subscription;

        @Override
        public CompletionStage<byte[]> getBody() {
            return body;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(List<ByteBuffer> items) {
            for (ByteBuffer b : items) {
                if (body.isDone()) {
                    return;
                }
                if (b.remaining() > MAX_ANSWER_BYTES - out.size()) {
                    subscription.cancel();
                    body.completeExceptionally(new AnswerTooLarge());
                    return;
                }
                byte[] chunk = new byte[b.remaining()];
                b.get(chunk);
                out.write(chunk, 0, chunk.length);
            }
        }

        @Override
        public void onError(Throwable t) {
            body.completeExceptionally(t);
        }

        @Override
        public void onComplete() {
            body.complete(out.toByteArray());
        }
    }
}
