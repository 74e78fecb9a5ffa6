package io.modelgateway.bench.upstream;

import io.modelgateway.bench.BoundServer;
import io.modelgateway.core.exchange.Transport;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.FastThreadLocal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The benchmark's upstream: answers the three endpoints of both API styles with answers made once at start
 * ({@link BlastAnswers}) and kept as the bytes to send, so that it is never what a benchmark measures. It reads a
 * request with the least work that still frames HTTP/1.1 correctly (the head up to its empty line, the body by its
 * Content-Length), picks the answer by path and by two markers in the body ({@code "stream":true},
 * {@code base64}) — Amazon Bedrock's {@code /model/<id>/invoke} and {@code /invoke-with-response-stream} by path
 * alone, the stream in AWS event-stream frames — and writes it:
 * <ul>
 *   <li>{@code burst} (the default): the whole answer in one write — a stream's head, every event as its own chunk
 *       and the last chunk together, as a fast or cached upstream, or any upstream under load, delivers them;</li>
 *   <li>{@code paced} (header {@code x-sim-shape: paced}): a stream's head, then one event per write, one tick
 *       apart ({@code x-sim-gap-ms: N} on the request, else {@code --gap-ms}, default 1), as a model generating
 *       tokens delivers them. One timer per event loop and gap serves every paced stream at once, one write and
 *       flush per stream per tick.</li>
 * </ul>
 * The answers are unreleasable direct buffers written as duplicates: no copy, no allocation per request beyond the
 * duplicate. Not a general HTTP server: no pipelining, no chunked requests, no error handling beyond closing. It runs
 * on the gateway's default transport ({@link Transport}), unlike the load generator ({@link
 * io.modelgateway.bench.RigTransport}): the cheaper it is on the client's core, the higher the ceiling the bench checks.
 *
 * <p>{@code java -cp benchmarks.jar io.modelgateway.bench.upstream.BlastUpstream [--listen HOST:PORT] [--gap-ms N]
 * [--threads N]}; prints {@code listening on http://HOST:PORT} once bound.
 */
public final class BlastUpstream implements AutoCloseable {
    private static final byte[] STREAM_TRUE = "\"stream\":true".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] STREAM_TRUE_SPACED = "\"stream\": true".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] BASE64 = "base64".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NOT_FOUND =
            "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    private final BoundServer server;

    /** One answer as direct buffers to write duplicates of. */
    private record Prebuilt(ByteBuf burst, ByteBuf[] chunks) {
        static Prebuilt of(BlastAnswers.Answer a) {
            ByteBuf[] chunks = null;
            if (a.stream()) {
                chunks = new ByteBuf[a.chunks().size()];
                for (int i = 0; i < chunks.length; i++) {
                    chunks[i] = direct(a.chunks().get(i));
                }
            }
            return new Prebuilt(direct(a.burst()), chunks);
        }

        private static ByteBuf direct(byte[] bytes) {
            return Unpooled.unreleasableBuffer(Unpooled.directBuffer(bytes.length).writeBytes(bytes));
        }
    }

    private final Prebuilt chat;
    private final Prebuilt chatStream;
    private final Prebuilt messages;
    private final Prebuilt messagesStream;
    private final Prebuilt embeddingsFloat;
    private final Prebuilt embeddingsBase64;
    private final Prebuilt bedrockStream;
    private final ByteBuf notFound = Prebuilt.direct(NOT_FOUND);
    private final long gapNanos;
    /** The paced streams of each event loop, by gap: each served by one timer of that loop. */
    private final FastThreadLocal<java.util.Map<Long, Pacer>> pacers = new FastThreadLocal<>();

    private BlastUpstream(String host, int port, long gapMillis, int threads) throws InterruptedException {
        BlastAnswers answers = new BlastAnswers();
        chat = Prebuilt.of(answers.chat);
        chatStream = Prebuilt.of(answers.chatStream);
        messages = Prebuilt.of(answers.messages);
        messagesStream = Prebuilt.of(answers.messagesStream);
        embeddingsFloat = Prebuilt.of(answers.embeddingsFloat);
        embeddingsBase64 = Prebuilt.of(answers.embeddingsBase64);
        bedrockStream = Prebuilt.of(answers.bedrockStream);
        gapNanos = TimeUnit.MILLISECONDS.toNanos(gapMillis);
        EventLoopGroup group = Transport.newGroup(threads, "blast");
        server = new BoundServer(group, new ServerBootstrap().group(group).channel(Transport.serverChannel())
                .option(ChannelOption.SO_BACKLOG, 4096)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new io.netty.channel.ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new Connection());
                    }
                })
                .bind(host, port).sync().channel());
    }

    public static BlastUpstream start(String host, int port, long gapMillis, int threads) throws InterruptedException {
        return new BlastUpstream(host, port, gapMillis, threads);
    }

    public int port() {
        return server.port();
    }

    @Override
    public void close() {
        server.close();
    }

    public static void main(String[] args) throws Exception {
        // The gateway's default transport (io_uring where the kernel offers it; -Dgateway.transport=epoll for the
        // other): measured with wrk on the same core, it answered chat, messages and a burst stream at 1.16-1.45x
        // the rate it reached on epoll, in every alternated pair (proxy-bench/README.md, "the bench's ceiling on
        // io_uring").
        String listen = "127.0.0.1:0";
        long gap = 1;
        int threads = 1;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--listen" -> listen = args[++i];
                case "--gap-ms" -> gap = Long.parseLong(args[++i]);
                case "--threads" -> threads = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + " (--listen HOST:PORT, --gap-ms N, --threads N)");
            }
        }
        int colon = listen.lastIndexOf(':');
        BlastUpstream u = start(listen.substring(0, colon), Integer.parseInt(listen.substring(colon + 1)), gap, threads);
        System.out.println("blast upstream listening on http://127.0.0.1:" + u.port() + " (" + Transport.name()
                + ", paced gap " + gap + " ms)");
        Runtime.getRuntime().addShutdownHook(new Thread(u::close));
        Thread.currentThread().join();
    }

    /** Reads requests off one connection and answers each. */
    private final class Connection extends ChannelInboundHandlerAdapter {
        private ByteBuf in;
        /** A paced answer is being written: requests wait. */
        private boolean answering;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            if (in == null) {
                in = b;
            } else {
                in = ctx.alloc().compositeBuffer().addComponents(true, in, b);
            }
            serve(ctx);
        }

        private void serve(ChannelHandlerContext ctx) {
            while (!answering && in != null && in.isReadable()) {
                int headEnd = headEnd(in);
                if (headEnd < 0) {
                    return;
                }
                int start = in.readerIndex();
                int length = contentLength(in, start, headEnd);
                int bodyStart = headEnd + 4;
                if (in.writerIndex() - bodyStart < length) {
                    return;
                }
                String path = path(in, start);
                boolean paced = header(in, start, headEnd, "x-sim-shape:", "paced");
                long gap = paced ? headerNumber(in, start, headEnd, "x-sim-gap-ms:") : -1;
                boolean stream = contains(in, bodyStart, length, STREAM_TRUE)
                        || contains(in, bodyStart, length, STREAM_TRUE_SPACED);
                Prebuilt answer;
                if (path.startsWith("/model/")) {
                    // Amazon Bedrock's InvokeModel (the messages answer) and its stream (in event-stream frames);
                    // the signature is not checked: that is the gateway's cost, not the upstream's
                    answer = path.endsWith("/invoke-with-response-stream") ? bedrockStream
                            : path.endsWith("/invoke") ? messages : null;
                } else if (path.endsWith("/chat/completions")) {
                    answer = stream ? chatStream : chat;
                } else if (path.endsWith("/messages")) {
                    answer = stream ? messagesStream : messages;
                } else if (path.endsWith("/embeddings")) {
                    answer = contains(in, bodyStart, length, BASE64) ? embeddingsBase64 : embeddingsFloat;
                } else {
                    answer = null;
                }
                in.readerIndex(bodyStart + length);
                if (answer == null) {
                    ctx.write(notFound.duplicate());
                } else if (paced && answer.chunks() != null) {
                    answering = true;
                    pacer(ctx.channel().eventLoop(), gap > 0 ? TimeUnit.MILLISECONDS.toNanos(gap) : gapNanos)
                            .add(new Paced(ctx, answer.chunks(), this));
                } else {
                    ctx.write(answer.burst().duplicate());
                }
            }
            if (in != null && !in.isReadable()) {
                in.release();
                in = null;
            }
        }

        void pacedDone(ChannelHandlerContext ctx) {
            answering = false;
            serve(ctx);
            ctx.flush();
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (in != null) {
                in.release();
                in = null;
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    private Pacer pacer(EventLoop loop, long gap) {
        java.util.Map<Long, Pacer> byGap = pacers.get();
        if (byGap == null) {
            byGap = new java.util.HashMap<>();
            pacers.set(byGap);
        }
        return byGap.computeIfAbsent(gap, g -> new Pacer(loop, g));
    }

    /** A paced stream: its chunks, and how many were written. */
    private static final class Paced {
        final ChannelHandlerContext ctx;
        final ByteBuf[] chunks;
        final Connection connection;
        int next;

        Paced(ChannelHandlerContext ctx, ByteBuf[] chunks, Connection connection) {
            this.ctx = ctx;
            this.chunks = chunks;
            this.connection = connection;
        }
    }

    /** One event loop's paced streams, each given its next chunk every tick. */
    private final class Pacer {
        private final EventLoop loop;
        private final long gap;
        private List<Paced> streams = new ArrayList<>();
        private List<Paced> spare = new ArrayList<>();
        private boolean ticking;
        /** When the current tick was due (System.nanoTime()): the next is due one gap after it, not after its end. */
        private long due;

        Pacer(EventLoop loop, long gap) {
            this.loop = loop;
            this.gap = gap;
        }

        void add(Paced p) {
            // The head goes out at once; the events follow, one per tick.
            p.ctx.writeAndFlush(p.chunks[p.next++].duplicate());
            streams.add(p);
            if (!ticking) {
                ticking = true;
                due = System.nanoTime() + gap;
                loop.schedule(this::tick, gap, TimeUnit.NANOSECONDS);
            }
        }

        private void tick() {
            List<Paced> now = streams;
            streams = spare;
            spare = now;
            for (Paced p : now) {
                if (!p.ctx.channel().isActive()) {
                    continue;
                }
                if (p.ctx.channel().isWritable()) {
                    p.ctx.writeAndFlush(p.chunks[p.next++].duplicate());
                }
                if (p.next < p.chunks.length) {
                    streams.add(p);
                } else {
                    p.connection.pacedDone(p.ctx);
                }
            }
            now.clear();
            if (streams.isEmpty()) {
                ticking = false;
            } else {
                long at = System.nanoTime();
                due = nextDue(due, gap, at);
                loop.schedule(this::tick, due - at, TimeUnit.NANOSECONDS);
            }
        }
    }

    /**
     * When the tick after one due at {@code due} is due, at {@code now}: at a fixed rate, one gap after the last was
     * due. A tick scheduled a gap after the last one's end ran late by the loop's timer lateness and the tick's own
     * work every time (measured at 1 ms: 1.14 ms between events at p50 and 1.30 on average, so 64 streams got 74 % of
     * the events they asked for). A tick that ran late is not made up by one right after it, which would put two
     * events of a stream together: the next is at least half a gap away.
     */
    static long nextDue(long due, long gap, long now) {
        return Math.max(due + gap, now + gap / 2);
    }

    // ------------------------------------------------------------------ the least HTTP/1.1 reading

    /** Index of the CR of the head's closing CRLF CRLF, or -1 when not all there yet. */
    private static int headEnd(ByteBuf b) {
        int end = b.writerIndex() - 3;
        for (int i = b.readerIndex(); i < end; i++) {
            if (b.getByte(i) == '\r' && b.getByte(i + 1) == '\n' && b.getByte(i + 2) == '\r' && b.getByte(i + 3) == '\n') {
                return i;
            }
        }
        return -1;
    }

    private static String path(ByteBuf b, int start) {
        int sp = b.indexOf(start, b.writerIndex(), (byte) ' ');
        int sp2 = b.indexOf(sp + 1, b.writerIndex(), (byte) ' ');
        int q = b.indexOf(sp + 1, sp2, (byte) '?');
        return b.toString(sp + 1, (q >= 0 ? q : sp2) - sp - 1, StandardCharsets.US_ASCII);
    }

    private static int contentLength(ByteBuf b, int start, int headEnd) {
        int at = find(b, start, headEnd, "\ncontent-length:");
        if (at < 0) {
            return 0;
        }
        int i = at + "\ncontent-length:".length();
        while (b.getByte(i) == ' ') {
            i++;
        }
        int n = 0;
        for (byte c; (c = b.getByte(i)) >= '0' && c <= '9'; i++) {
            n = n * 10 + (c - '0');
        }
        return n;
    }

    private static boolean header(ByteBuf b, int start, int headEnd, String name, String value) {
        int at = find(b, start, headEnd, "\n" + name);
        if (at < 0) {
            return false;
        }
        int i = at + name.length() + 1;
        while (b.getByte(i) == ' ') {
            i++;
        }
        return find(b, i, Math.min(i + value.length(), headEnd), value) == i;
    }

    /** A header's whole-number value, or -1 when absent. */
    private static long headerNumber(ByteBuf b, int start, int headEnd, String name) {
        int at = find(b, start, headEnd, "\n" + name);
        if (at < 0) {
            return -1;
        }
        int i = at + name.length() + 1;
        while (b.getByte(i) == ' ') {
            i++;
        }
        long n = 0;
        for (byte c; i < headEnd && (c = b.getByte(i)) >= '0' && c <= '9'; i++) {
            n = n * 10 + (c - '0');
        }
        return n;
    }

    /** Case-insensitive search of an ASCII {@code needle} in {@code [from, to)}. */
    private static int find(ByteBuf b, int from, int to, String needle) {
        int n = needle.length();
        outer:
        for (int i = from; i <= to - n; i++) {
            for (int j = 0; j < n; j++) {
                int c = b.getByte(i + j);
                if (c >= 'A' && c <= 'Z') {
                    c += 32;
                }
                if (c != needle.charAt(j)) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static boolean contains(ByteBuf b, int from, int length, byte[] needle) {
        int to = from + length - needle.length;
        outer:
        for (int i = from; i <= to; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (b.getByte(i + j) != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }
}
