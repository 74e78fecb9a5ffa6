package io.modelgateway.core.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * Debian's Chromium, headless, driven over its DevTools protocol (a WebSocket from the JDK's HTTP client; no
 * driver, no npm package). One browser, one page; everything bounded in time; {@link #close} stops the process by
 * its pid (and its children) and deletes the throwaway profile.
 *
 * <p>The flags keep it on this machine: no QUIC, no first-run, no background networking, no component updates, no
 * sync, a new empty profile, and the debugging port on 127.0.0.1 only. Chromium is installed by {@code scripts/test}
 * when missing; a test run without it fails here with how to install it.
 */
public final class HeadlessChromium implements AutoCloseable {
    /** Where Debian's package puts it. */
    public static final Path EXECUTABLE = Path.of("/usr/bin/chromium");
    private static final Duration START = Duration.ofSeconds(30);
    private static final Duration CALL = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Process process;
    private final Path profile;
    private final WebSocket socket;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    /** Uncaught exceptions and console errors of the page, as text. */
    private final List<String> problems = new CopyOnWriteArrayList<>();
    private String session;

    private HeadlessChromium(Process process, Path profile, WebSocket socket) {
        this.process = process;
        this.profile = profile;
        this.socket = socket;
    }

    /** The flags every run uses (the network is closed here: without them Chromium reaches for outside hosts). */
    public static List<String> baseCommand(Path profile) {
        return List.of(EXECUTABLE.toString(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio", "--user-data-dir=" + profile);
    }

    /** Fails the test, saying how to install it, when Chromium is not there. */
    public static void requireInstalled() {
        if (!Files.isExecutable(EXECUTABLE)) {
            throw new AssertionError(EXECUTABLE + " is missing: scripts/test installs it (as root: apt-get update && "
                    + "apt-get install -y chromium)");
        }
    }

    /** Starts the browser with a {@code width × height} window and one blank page attached. */
    public static HeadlessChromium launch(int width, int height) throws Exception {
        requireInstalled();
        Path profile = Files.createTempDirectory("chromium-profile-");
        List<String> command = new ArrayList<>(baseCommand(profile));
        command.addAll(List.of("--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
                "--window-size=" + width + "," + height, "about:blank"));
        Path log = profile.resolve("chromium.log");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            Path portFile = profile.resolve("DevToolsActivePort");
            long deadline = System.nanoTime() + START.toNanos();
            List<String> lines = List.of();
            while (lines.size() < 2) {
                if (!process.isAlive()) {
                    throw new AssertionError("chromium exited with " + process.exitValue() + ":\n" + Files.readString(log));
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("chromium did not open its DevTools port within " + START + ":\n"
                            + Files.readString(log));
                }
                if (Files.exists(portFile)) {
                    lines = Files.readAllLines(portFile);
                }
                Thread.sleep(50);
            }
            URI uri = URI.create("ws://127.0.0.1:" + lines.get(0).trim() + lines.get(1).trim());
            Listener listener = new Listener();
            WebSocket socket = HttpClient.newHttpClient().newWebSocketBuilder().connectTimeout(START)
                    .buildAsync(uri, listener).get(START.toSeconds(), TimeUnit.SECONDS);
            HeadlessChromium browser = new HeadlessChromium(process, profile, socket);
            listener.browser = browser;
            browser.attach();
            return browser;
        } catch (Exception | AssertionError e) {
            stop(process);
            deleteTree(profile);
            throw e;
        }
    }

    private void attach() throws Exception {
        String target = call(null, "Target.createTarget", params().put("url", "about:blank")).path("targetId").asText();
        session = call(null, "Target.attachToTarget", params().put("targetId", target).put("flatten", true))
                .path("sessionId").asText();
        send("Page.enable", params());
        send("Runtime.enable", params());
        send("Log.enable", params());
    }

    public static ObjectNode params() {
        return JSON.createObjectNode();
    }

    /** A DevTools command on the page; its result. */
    public JsonNode send(String method, ObjectNode params) throws Exception {
        return call(session, method, params);
    }

    private JsonNode call(String sessionId, String method, ObjectNode params) throws Exception {
        int id = ids.incrementAndGet();
        ObjectNode message = JSON.createObjectNode().put("id", id).put("method", method);
        message.set("params", params);
        if (sessionId != null) {
            message.put("sessionId", sessionId);
        }
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        pending.put(id, answer);
        synchronized (socket) {
            socket.sendText(JSON.writeValueAsString(message), true).get(CALL.toSeconds(), TimeUnit.SECONDS);
        }
        JsonNode reply;
        try {
            reply = answer.get(CALL.toSeconds(), TimeUnit.SECONDS);
        } finally {
            pending.remove(id);
        }
        if (reply.has("error")) {
            throw new AssertionError(method + " failed: " + reply.get("error"));
        }
        return reply.path("result");
    }

    /** Opens {@code url} in the page (returns once the navigation is under way; poll with {@link #evaluate}). */
    public void navigate(String url) throws Exception {
        JsonNode r = send("Page.navigate", params().put("url", url));
        if (r.hasNonNull("errorText")) {
            throw new AssertionError("navigation to " + url + " failed: " + r.get("errorText").asText());
        }
    }

    /** Sends these headers with every request of the page (e.g. the dashboard's credentials). */
    public void extraHeaders(Map<String, String> headers) throws Exception {
        send("Network.enable", params());
        ObjectNode h = params();
        headers.forEach(h::put);
        ObjectNode p = params();
        p.set("headers", h);
        send("Network.setExtraHTTPHeaders", p);
    }

    /** The value of a JavaScript expression in the page (JSON-able values only). */
    public JsonNode evaluate(String expression) throws Exception {
        JsonNode r = send("Runtime.evaluate", params().put("expression", expression).put("returnByValue", true)
                .put("awaitPromise", true));
        if (r.has("exceptionDetails")) {
            throw new AssertionError("evaluating " + expression + " threw: " + r.get("exceptionDetails"));
        }
        return r.path("result").path("value");
    }

    /** Polls {@code expression} until it is {@code true}, at most {@code max}; fails with {@code what} otherwise. */
    public void waitFor(String expression, Duration max, String what) throws Exception {
        long deadline = System.nanoTime() + max.toNanos();
        // A page still loading may have no body yet: that is "not yet", not a failure.
        String guarded = "(() => { try { return !!(" + expression + "); } catch (e) { return false; } })()";
        while (!evaluate(guarded).asBoolean(false)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + ": not within " + max + " (page problems: " + problems + ")");
            }
            Thread.sleep(100);
        }
    }

    /** A PNG of the whole page (not only the window). */
    public byte[] screenshot() throws Exception {
        JsonNode size = evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]");
        ObjectNode clip = params().put("x", 0).put("y", 0).put("width", size.get(0).asInt())
                .put("height", size.get(1).asInt()).put("scale", 1);
        ObjectNode p = params().put("format", "png").put("captureBeyondViewport", true);
        p.set("clip", clip);
        JsonNode r = send("Page.captureScreenshot", p);
        return Base64.getDecoder().decode(r.path("data").asText());
    }

    /** Uncaught exceptions, console errors and log errors seen so far. */
    public List<String> problems() {
        return List.copyOf(problems);
    }

    private void onMessage(String text) {
        JsonNode m;
        try {
            m = JSON.readTree(text);
        } catch (IOException e) {
            problems.add("unreadable DevTools message: " + e);
            return;
        }
        if (m.has("id")) {
            CompletableFuture<JsonNode> f = pending.get(m.get("id").asInt());
            if (f != null) {
                f.complete(m);
            }
            return;
        }
        String method = m.path("method").asText();
        JsonNode p = m.path("params");
        switch (method) {
            case "Runtime.exceptionThrown" -> problems.add("exception: " + p.path("exceptionDetails"));
            case "Runtime.consoleAPICalled" -> {
                if (p.path("type").asText().equals("error")) {
                    problems.add("console.error: " + p.path("args"));
                }
            }
            case "Log.entryAdded" -> {
                if (p.path("entry").path("level").asText().equals("error")) {
                    problems.add("log: " + p.path("entry").path("text").asText() + " "
                            + p.path("entry").path("url").asText());
                }
            }
            default -> {
            }
        }
    }

    /** Closes the browser, stops its process tree by pid, deletes the profile. */
    @Override
    public void close() {
        try {
            socket.sendText("{\"id\":" + ids.incrementAndGet() + ",\"method\":\"Browser.close\"}", true)
                    .get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            // stopped below either way
        }
        socket.abort();
        stop(process);
        deleteTree(profile);
    }

    private static void stop(Process process) {
        List<ProcessHandle> children = process.descendants().toList();
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        children.forEach(ProcessHandle::destroyForcibly);
    }

    static void deleteTree(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temp directory left behind is not worth failing a test for
        }
    }

    /** Collects text frames (a screenshot arrives in many parts) and hands whole messages on. */
    private static final class Listener implements WebSocket.Listener {
        private final StringBuilder buffer = new StringBuilder();
        volatile HeadlessChromium browser;

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            buffer.append(data);
            if (last) {
                String text = buffer.toString();
                buffer.setLength(0);
                HeadlessChromium b = browser;
                if (b != null) {
                    b.onMessage(text);
                }
            }
            ws.request(1);
            return null;
        }
    }
}
