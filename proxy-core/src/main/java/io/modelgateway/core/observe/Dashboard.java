package io.modelgateway.core.observe;

import io.modelgateway.core.config.AdminKey;
import io.modelgateway.core.config.GatewayConfig;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The live dashboard of the admin listener: the page ({@code GET /}) and its scripts and styles, served from the
 * jar (the charts are uPlot, from its WebJar), and {@code GET /dashboard/events}, a server-sent event stream that
 * pushes the figures once a second ({@link LiveHistory}, fed by {@link LiveStats}).
 *
 * <p>Access: when {@code admin.key} is set, every dashboard path needs it (HTTP Basic with the key as the password,
 * which a browser asks for, or {@code Authorization: Bearer KEY}), else 401. Without a key the dashboard is served
 * only when the admin listener's address is a loopback one; elsewhere it answers 403. {@code /metrics},
 * {@code /health} and {@code /ready} are not its business.
 *
 * <p>Streams: one per open page, at most {@value #MAX_STREAMS} at once (one more is answered 503 with
 * {@code Retry-After}). The first event is a snapshot (the whole history of the chosen series, the tables, the
 * config); then one small event a second with the new point. A page that does not read (its connection past the
 * write watermark) is skipped, and gets a snapshot again once it reads. When the admin listener stops, every
 * stream gets a last {@code shutdown} event and a properly ended response.
 *
 * <p>Threads: everything runs on the admin listener's single event loop — requests, the once-a-second tick and the
 * pushes — so the streams and the history need no locks. The static files are read at construction.
 */
public final class Dashboard {
    private static final Logger LOG = Logger.getLogger(Dashboard.class.getName());

    /** Dashboard pages open at once; one more stream is refused with 503. */
    static final int MAX_STREAMS = 8;
    static final String EVENTS_PATH = "/dashboard/events";
    private static final String PREFIX = "/dashboard/";
    private static final String RESOURCES = "/io/modelgateway/core/observe/dashboard/";
    private static final String UPLOT_POM = "/META-INF/maven/org.webjars.npm/uplot/pom.properties";
    private static final String REALM = "Basic realm=\"Model Gateway admin\", charset=\"UTF-8\"";
    private static final String CSP = "default-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
    private static final AttributeKey<Boolean> STREAMING = AttributeKey.valueOf(Dashboard.class, "streaming");

    static final String KEYS_API = "/admin/api/keys/";
    private static final String SPEND_SUFFIX = "/spend";

    private final LiveStats stats;
    /** Null when the server reports no spend (tests of the page alone). */
    private KeySpends spends;
    private final Supplier<GatewayConfig> config;
    private final DeploymentStates deployments;
    private final boolean loopback;
    private final Map<String, StaticFile> files;
    private final List<Stream> streams = new ArrayList<>();
    private LiveHistory history;
    private ScheduledFuture<?> ticker;
    private boolean tickFailureLogged;

    private record StaticFile(byte[] body, String contentType) {
    }

    /** One open page; confined to the admin loop. */
    private static final class Stream {
        final Channel channel;
        final String selector;
        /** The next event is a snapshot: the first, or the first after the page fell behind. */
        boolean fresh = true;
        GatewayConfig sentConfig;

        Stream(Channel channel, String selector) {
            this.channel = channel;
            this.selector = selector;
        }
    }

    /**
     * @param stats       the exchanges' live counters (an observer of every exchange)
     * @param config      the config in use, read per request and per tick (its models, keys and admin key)
     * @param deployments the deployments' health, read once a second on the admin loop
     * @param loopback    whether the admin listener's address is a loopback one (then no key is needed)
     */
    public Dashboard(LiveStats stats, Supplier<GatewayConfig> config, DeploymentStates deployments, boolean loopback) {
        this.stats = Objects.requireNonNull(stats, "stats");
        this.config = Objects.requireNonNull(config, "config");
        this.deployments = Objects.requireNonNull(deployments, "deployments");
        this.loopback = loopback;
        this.files = loadFiles();
    }

    private static Map<String, StaticFile> loadFiles() {
        Map<String, StaticFile> files = new HashMap<>();
        files.put("/", new StaticFile(resource(RESOURCES + "index.html"), "text/html; charset=utf-8"));
        files.put(PREFIX + "dashboard.js", new StaticFile(resource(RESOURCES + "dashboard.js"),
                "text/javascript; charset=utf-8"));
        files.put(PREFIX + "dashboard.css", new StaticFile(resource(RESOURCES + "dashboard.css"),
                "text/css; charset=utf-8"));
        String uplot = uplotDirectory();
        files.put(PREFIX + "uPlot.iife.min.js", new StaticFile(resource(uplot + "uPlot.iife.min.js"),
                "text/javascript; charset=utf-8"));
        files.put(PREFIX + "uPlot.min.css", new StaticFile(resource(uplot + "uPlot.min.css"),
                "text/css; charset=utf-8"));
        return Map.copyOf(files);
    }

    /**
     * Where the uPlot WebJar keeps its files: {@code META-INF/resources/webjars/uplot/VERSION/dist/}, VERSION read
     * from the jar's own Maven properties, so a version bump in the pom needs no change here.
     */
    public static String uplotDirectory() {
        Properties p = new Properties();
        try (InputStream in = Dashboard.class.getResourceAsStream(UPLOT_POM)) {
            if (in == null) {
                throw new IllegalStateException("the uPlot WebJar is missing from the class path (" + UPLOT_POM + ")");
            }
            p.load(in);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + UPLOT_POM, e);
        }
        return "/META-INF/resources/webjars/uplot/" + p.getProperty("version") + "/dist/";
    }

    /** A file of the jar, whole. */
    public static byte[] resource(String path) {
        try (InputStream in = Dashboard.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("missing from the jar: " + path);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + path + " from the jar", e);
        }
    }

    /** Where {@code GET /admin/api/keys/NAME/spend} reads a key's spend. Call before the listener starts. */
    public Dashboard spends(KeySpends spends) {
        this.spends = spends;
        return this;
    }

    /**
     * Whether {@code path} is the dashboard's (the page, its files, its stream) or of its admin API
     * ({@code /admin/api/…}), which the admin key guards the same way.
     */
    static boolean handles(String path) {
        return path.equals("/") || path.startsWith(PREFIX) || path.equals("/dashboard") || path.startsWith("/admin/");
    }

    /** Starts the once-a-second tick on the admin listener's loop. */
    void start(EventLoop loop) {
        this.history = new LiveHistory(stats, System.nanoTime(), System.currentTimeMillis());
        ticker = loop.scheduleAtFixedRate(this::tick, 1, 1, TimeUnit.SECONDS);
    }

    /**
     * Ends every stream with a {@code shutdown} event and the response's last chunk, and stops the tick. Call on
     * the admin loop, before it shuts down.
     */
    void stop() {
        if (ticker != null) {
            ticker.cancel(false);
        }
        for (Stream s : new ArrayList<>(streams)) {
            s.channel.write(event(s.channel, null, "{\"type\":\"shutdown\"}"));
            s.channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(ChannelFutureListener.CLOSE);
        }
        streams.clear();
    }

    /** Dashboard streams open now (tests). */
    int openStreams() {
        return streams.size();
    }

    /**
     * Answers a dashboard request (the caller decided {@link #handles}); the caller releases the request.
     */
    void handle(ChannelHandlerContext ctx, FullHttpRequest request, String path, boolean keepAlive) {
        HttpResponseStatus refusal = refusal(request.headers());
        if (refusal != null) {
            FullHttpResponse r = json(refusal, refusal == HttpResponseStatus.UNAUTHORIZED
                    ? "{\"error\":\"the dashboard needs the admin key\"}"
                    : "{\"error\":\"the dashboard is off: set admin.key to serve it on a non-loopback address\"}");
            if (refusal == HttpResponseStatus.UNAUTHORIZED) {
                r.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, REALM);
            }
            send(ctx, r, keepAlive);
            return;
        }
        if (!HttpMethod.GET.equals(request.method())) {
            FullHttpResponse r = json(HttpResponseStatus.METHOD_NOT_ALLOWED, "{\"error\":\"method not allowed\"}");
            r.headers().set(HttpHeaderNames.ALLOW, "GET");
            send(ctx, r, keepAlive);
            return;
        }
        if (path.equals(EVENTS_PATH)) {
            openStream(ctx, request);
            return;
        }
        if (path.startsWith("/admin/")) {
            spendReport(ctx, path, keepAlive);
            return;
        }
        StaticFile file = files.get(path.equals("/dashboard") ? "/" : path);
        if (file == null) {
            send(ctx, json(HttpResponseStatus.NOT_FOUND, "{\"error\":\"not found\"}"), keepAlive);
            return;
        }
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                Unpooled.wrappedBuffer(file.body()));
        r.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, file.contentType())
                .setInt(HttpHeaderNames.CONTENT_LENGTH, file.body().length)
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_CACHE);
        secure(r.headers());
        send(ctx, r, keepAlive);
    }

    /** Whether a request on this channel is refused because the channel carries a stream (no pipelining on it). */
    static boolean streaming(Channel channel) {
        return Boolean.TRUE.equals(channel.attr(STREAMING).get());
    }

    /** 401 without the right key, 403 with no key on a non-loopback listener, null when the request may pass. */
    private HttpResponseStatus refusal(HttpHeaders headers) {
        AdminKey key = config.get().adminKey();
        if (key == null) {
            return loopback ? null : HttpResponseStatus.FORBIDDEN;
        }
        return key.matches(presentedKey(headers.get(HttpHeaderNames.AUTHORIZATION)))
                ? null : HttpResponseStatus.UNAUTHORIZED;
    }

    /** The key of {@code Authorization: Bearer KEY} or the password of {@code Basic}; null when neither. */
    static String presentedKey(String authorization) {
        if (authorization == null) {
            return null;
        }
        String a = authorization.strip();
        if (a.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return a.substring(7).strip();
        }
        if (a.regionMatches(true, 0, "Basic ", 0, 6)) {
            try {
                String decoded = new String(Base64.getDecoder().decode(a.substring(6).strip()),
                        StandardCharsets.UTF_8);
                int colon = decoded.indexOf(':');
                return colon < 0 ? null : decoded.substring(colon + 1);
            } catch (IllegalArgumentException e) {
                return null;
            }
        }
        return null;
    }

    private void openStream(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (streams.size() >= MAX_STREAMS) {
            FullHttpResponse r = json(HttpResponseStatus.SERVICE_UNAVAILABLE,
                    "{\"error\":\"too many dashboards open (" + MAX_STREAMS + "); close one\"}");
            r.headers().set(HttpHeaderNames.RETRY_AFTER, "10");
            send(ctx, r, false);
            return;
        }
        List<String> series = new QueryStringDecoder(request.uri()).parameters().get("series");
        String selector = series == null || series.isEmpty() || series.get(0).length() > 300 ? "total" : series.get(0);
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8")
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE)
                .set("x-accel-buffering", "no");
        HttpUtil.setTransferEncodingChunked(head, true);
        HttpUtil.setKeepAlive(head, true);
        Channel channel = ctx.channel();
        channel.attr(STREAMING).set(Boolean.TRUE);
        channel.write(head);
        Stream stream = new Stream(channel, selector);
        streams.add(stream);
        channel.closeFuture().addListener(f -> streams.remove(stream));
        push(stream, history.state(System.currentTimeMillis()));
    }

    /**
     * {@code GET /admin/api/keys/NAME/spend}: the key's spend today and this month (UTC), its budgets and what is left of
     * them (null without a budget), when each period resets, and where the counts come from ({@code source}: this
     * replica's, or every replica's from Redis). 404 for another path or a name the config does not have; 503 when the
     * spend is shared and Redis does not answer. Names only, never a key. A shared spend is answered when Redis
     * replies: the connection reads nothing more until then, so pipelined requests keep their order.
     */
    private void spendReport(ChannelHandlerContext ctx, String path, boolean keepAlive) {
        String name = path.startsWith(KEYS_API) && path.endsWith(SPEND_SUFFIX)
                ? path.substring(KEYS_API.length(), path.length() - SPEND_SUFFIX.length()) : null;
        if (name == null || name.isEmpty() || name.indexOf('/') >= 0 || spends == null) {
            send(ctx, json(HttpResponseStatus.NOT_FOUND, name == null
                    ? "{\"error\":\"not found\"}" : "{\"error\":\"no key of that name\"}"), keepAlive);
            return;
        }
        ctx.channel().config().setAutoRead(false);
        spends.spend(name).whenComplete((s, failure) -> ctx.executor().execute(() -> {
            send(ctx, spendReport(name, failure == null ? s : null, failure != null), keepAlive);
            ctx.channel().config().setAutoRead(true);
        }));
    }

    private static FullHttpResponse spendReport(String name, KeySpends.KeySpend s, boolean failed) {
        if (failed || (s != null && KeySpends.UNAVAILABLE.equals(s.source()))) {
            return json(HttpResponseStatus.SERVICE_UNAVAILABLE,
                    "{\"error\":\"the shared spend cannot be read now: Redis does not answer\"}");
        }
        if (s == null) {
            return json(HttpResponseStatus.NOT_FOUND, "{\"error\":\"no key of that name\"}");
        }
        // A configured key name (letters, digits, '_', '.', '-'): nothing in it needs escaping.
        StringBuilder sb = new StringBuilder(256).append("{\"key\":\"").append(name).append("\",\"daily\":");
        period(sb, s.todayUsd(), s.dailyBudgetUsd(), s.dayResetMillis());
        sb.append(",\"monthly\":");
        period(sb, s.monthUsd(), s.monthlyBudgetUsd(), s.monthResetMillis());
        sb.append(",\"source\":\"").append(s.source()).append('"');
        return json(HttpResponseStatus.OK, sb.append('}').toString());
    }

    private static void period(StringBuilder sb, double spent, double budget, long resetMillis) {
        sb.append("{\"spent_usd\":").append(AccessLog.usd(spent)).append(",\"budget_usd\":")
                .append(budget > 0 ? AccessLog.usd(budget) : "null").append(",\"remaining_usd\":")
                .append(budget > 0 ? AccessLog.usd(Math.max(0, budget - spent)) : "null")
                .append(",\"resets_at\":\"").append(java.time.Instant.ofEpochMilli(resetMillis)).append("\"}");
    }

    /** Once a second on the admin loop: a new point of history, pushed to every page that keeps up. */
    private void tick() {
        try {
            long now = System.nanoTime();
            long millis = System.currentTimeMillis();
            history.tick(now, millis, deployments.states(now));
            if (streams.isEmpty()) {
                return;
            }
            String state = history.state(millis);
            for (Stream s : new ArrayList<>(streams)) {
                if (!s.channel.isWritable()) {
                    s.fresh = true; // it fell behind: a whole snapshot once it reads again, not a gap
                    continue;
                }
                push(s, state);
            }
        } catch (RuntimeException e) {
            // A scheduled task that throws is never run again: log once, keep ticking.
            if (!tickFailureLogged) {
                tickFailureLogged = true;
                LOG.log(Level.WARNING, "dashboard tick failed (further failures are not logged)", e);
            }
        }
    }

    private void push(Stream s, String state) {
        GatewayConfig current = config.get();
        boolean snapshot = s.fresh;
        StringBuilder data = new StringBuilder(snapshot ? 32_768 : 4096);
        data.append("{\"type\":\"").append(snapshot ? "snapshot" : "tick").append("\",\"points\":")
                .append(history.points(history.find(s.selector), snapshot ? LiveHistory.SECONDS : 1, s.selector))
                .append(",\"state\":").append(state);
        if (snapshot || s.sentConfig != current) {
            data.append(",\"config\":").append(LiveHistory.config(current));
            s.sentConfig = current;
        }
        data.append('}');
        s.fresh = false;
        Channel ch = s.channel;
        ch.writeAndFlush(event(ch, snapshot ? "retry: 3000\n" : null, data)).addListener(f -> {
            if (!f.isSuccess()) {
                ch.close();
            }
        });
    }

    /** One SSE event: {@code data: JSON}, the JSON on one line (it has no line breaks). */
    private static DefaultHttpContent event(Channel ch, String prefix, CharSequence json) {
        StringBuilder sb = new StringBuilder(json.length() + 24);
        if (prefix != null) {
            sb.append(prefix);
        }
        sb.append("data: ").append(json).append("\n\n");
        return new DefaultHttpContent(ByteBufUtil.writeUtf8(ch.alloc(), sb));
    }

    private static FullHttpResponse json(HttpResponseStatus status, String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(bytes));
        r.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length)
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
        return r;
    }

    private static void secure(HttpHeaders h) {
        h.set("content-security-policy", CSP)
                .set("x-content-type-options", "nosniff")
                .set("x-frame-options", "DENY")
                .set("referrer-policy", "no-referrer");
    }

    private static void send(ChannelHandlerContext ctx, FullHttpResponse r, boolean keepAlive) {
        HttpUtil.setKeepAlive(r, keepAlive);
        if (keepAlive) {
            ctx.writeAndFlush(r);
        } else {
            ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
        }
    }
}
