package io.modelgateway.bench.loadgen;

import io.modelgateway.core.exchange.Transport;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SelectStrategyFactory;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * One load run, from opening the connections to the merged result: connect (at most
 * {@value #CONNECTS_IN_FLIGHT} handshakes at a time, so ten thousand connections do not overflow the
 * server's accept backlog), warm up, measure, stop.
 *
 * <p>Threads: the main thread drives the phases and prints progress; each event loop owns its
 * {@link LoopStats} and the {@link Connection}s placed on it. The phase is the only state both read.
 * Results are merged on each loop in turn after the run has stopped.
 */
final class LoadRun {
    static final int CONNECTS_IN_FLIGHT = 256;
    private static final long SWEEP_MILLIS = 50;

    private static final int CONNECTING = 0;
    private static final int WARMUP = 1;
    private static final int MEASURING = 2;
    private static final int STOPPED = 3;

    private final LoadOptions options;
    private final InetSocketAddress address;
    private final Bootstrap bootstrap;
    private final List<LoopStats> loops = new ArrayList<>();
    private volatile int phase = CONNECTING;

    private LoadRun(LoadOptions options, EventLoopGroup group) {
        this.options = options;
        this.address = new InetSocketAddress(options.address(), options.port());
        this.bootstrap = new Bootstrap()
                .group(group)
                .channel(Transport.socketChannel())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(options.timeoutMs(), 10_000));
        for (EventExecutor e : group) {
            loops.add(new LoopStats((EventLoop) e, new RequestTemplate(options)));
        }
    }

    /** Runs the load described by {@code options}; progress lines go to {@code progress} (null: none). */
    static LoadResult execute(LoadOptions options, PrintStream progress) throws InterruptedException {
        EventLoopGroup group = newGroup(options);
        LoadRun run = new LoadRun(options, group);
        try {
            return run.execute(progress);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
            for (LoopStats loop : run.loops) {
                loop.template.close();
            }
        }
    }

    /**
     * The event loops. With {@code --busy-poll} (epoll only) each loop asks for ready I/O without waiting and runs its
     * tasks in between, forever: it never sleeps in {@code epoll_wait}, so a writer on the same machine does not have
     * to wake it (on loopback that wake-up is run by the writer's core, in its {@code send}).
     */
    static EventLoopGroup newGroup(LoadOptions options) {
        if (options.busyPoll() && Transport.name().equals("epoll")) {
            SelectStrategyFactory neverWait = () -> (readyNow, hasTasks) -> readyNow.get();
            return new MultiThreadIoEventLoopGroup(options.threads(), new DefaultThreadFactory("loadgen", true),
                    EpollIoHandler.newFactory(0, neverWait));
        }
        return Transport.newGroup(options.threads(), "loadgen");
    }

    boolean measuring() {
        return phase == MEASURING;
    }

    boolean stopped() {
        return phase == STOPPED;
    }

    InetSocketAddress address() {
        return address;
    }

    /** A bootstrap for one channel of a connection, on that connection's event loop. */
    Bootstrap bootstrap(EventLoop loop, ChannelHandler reader) {
        return bootstrap.clone(loop).handler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                HttpDecoderConfig config = new HttpDecoderConfig()
                        .setMaxChunkSize(64 * 1024)
                        .setValidateHeaders(false);
                ch.pipeline().addLast("http-codec", new HttpClientCodec(config, false, false));
                ch.pipeline().addLast("load-reader", reader);
            }
        });
    }

    private LoadResult execute(PrintStream progress) throws InterruptedException {
        long interval = options.openLoop() ? Math.round(1e9 * options.connections() / options.rate()) : 0;
        List<Connection> all = new ArrayList<>(options.connections());
        for (int i = 0; i < options.connections(); i++) {
            LoopStats loop = loops.get(i % loops.size());
            Connection c = new Connection(this, loop, interval);
            loop.connections.add(c); // before any loop runs a task: the list is published by execute() below
            all.add(c);
        }
        long began = System.nanoTime();
        connectAll(all, progress, began);
        List<ScheduledFuture<?>> sweepers = new ArrayList<>();
        long timeoutNanos = TimeUnit.MILLISECONDS.toNanos(options.timeoutMs());
        for (LoopStats loop : loops) {
            sweepers.add(loop.loop.scheduleAtFixedRate(() -> {
                long now = System.nanoTime();
                for (Connection c : loop.connections) {
                    c.checkTimeout(now, timeoutNanos);
                }
            }, SWEEP_MILLIS, SWEEP_MILLIS, TimeUnit.MILLISECONDS));
        }

        // Start every connection; in an open loop connection i is offset by i / rate, so the requests
        // of all the connections together are evenly spaced.
        long start = System.nanoTime();
        double gap = options.openLoop() ? 1e9 / options.rate() : 0;
        phase = options.warmupSeconds() > 0 ? WARMUP : MEASURING;
        for (LoopStats loop : loops) {
            loop.loop.execute(() -> {
                for (int k = 0; k < loop.connections.size(); k++) {
                    int index = k * loops.size() + loops.indexOf(loop);
                    loop.connections.get(k).start(start + Math.round(index * gap));
                }
            });
        }
        Progress meter = new Progress(progress, began);
        long warmupEnd = start + seconds(options.warmupSeconds());
        meter.runUntil(warmupEnd, "warmup");
        long alloc0 = AllocSample.take(options.allocMetrics());
        long measureStart = System.nanoTime();
        phase = MEASURING;
        CpuSample cpu0 = CpuSample.take(options.cpuPids());
        meter.runUntil(measureStart + seconds(options.durationSeconds()), "measure");
        phase = STOPPED;
        long measureEnd = System.nanoTime();
        CpuSample cpu1 = CpuSample.take(options.cpuPids());
        long alloc1 = AllocSample.take(options.allocMetrics());

        for (ScheduledFuture<?> s : sweepers) {
            s.cancel(false);
        }
        LoadResult result = new LoadResult(options, Transport.name(), measureEnd - measureStart,
                cpu1.minus(cpu0), alloc0 < 0 || alloc1 < 0 ? -1 : alloc1 - alloc0);
        for (LoopStats loop : loops) {
            await(loop.loop.submit(() -> {
                result.add(loop);
                for (Connection c : loop.connections) {
                    c.close();
                }
            }));
        }
        return result;
    }

    /** Opens every connection, a bounded number of handshakes at a time; returns when all have tried. */
    private void connectAll(List<Connection> all, PrintStream progress, long began) throws InterruptedException {
        Semaphore inFlight = new Semaphore(CONNECTS_IN_FLIGHT);
        long lastPrint = began;
        for (Connection c : all) {
            while (!inFlight.tryAcquire(1, TimeUnit.SECONDS)) {
                lastPrint = printConnecting(progress, began, lastPrint);
            }
            c.loop().execute(() -> c.connect(inFlight::release));
            long now = System.nanoTime();
            if (now - lastPrint >= 1_000_000_000L) {
                lastPrint = printConnecting(progress, began, lastPrint);
            }
        }
        // A refused first attempt also releases: every connection has had its try once all permits are back.
        while (!inFlight.tryAcquire(CONNECTS_IN_FLIGHT, 1, TimeUnit.SECONDS)) {
            lastPrint = printConnecting(progress, began, lastPrint);
        }
    }

    private long printConnecting(PrintStream progress, long began, long lastPrint) {
        long now = System.nanoTime();
        if (progress != null && now - lastPrint >= 1_000_000_000L) {
            progress.printf(Locale.ROOT, "[%5.1fs] connecting   %d of %d open%n", (now - began) / 1e9,
                    sum(LoopStats.P_OPEN), options.connections());
            return now;
        }
        return lastPrint;
    }

    private long sum(int counter) {
        long total = 0;
        for (LoopStats loop : loops) {
            total += loop.published.get(counter);
        }
        return total;
    }

    private static long seconds(double s) {
        return Math.round(s * 1e9);
    }

    private static void await(java.util.concurrent.Future<?> f) throws InterruptedException {
        try {
            f.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("event loop task failed", e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("event loop did not answer in 10 s", e);
        }
    }

    /** Sleeps in one-second steps until a deadline, printing one progress line per step. */
    private final class Progress {
        private final PrintStream out;
        private final long began;
        private long lastAt;
        private long lastCompleted;

        Progress(PrintStream out, long began) {
            this.out = out;
            this.began = began;
            this.lastAt = System.nanoTime();
            this.lastCompleted = sum(LoopStats.P_COMPLETED);
        }

        void runUntil(long deadline, String phaseName) throws InterruptedException {
            while (true) {
                long now = System.nanoTime();
                if (now - deadline >= 0) {
                    return;
                }
                long wait = Math.min(deadline - now, lastAt + 1_000_000_000L - now);
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
                now = System.nanoTime();
                if (now - lastAt >= 1_000_000_000L - 1_000_000L) {
                    long completed = sum(LoopStats.P_COMPLETED);
                    if (out != null) {
                        out.printf(Locale.ROOT, "[%5.1fs] %-8s %9.0f req/s   %d done   %d errors   %d in flight   %d open%n",
                                (now - began) / 1e9, phaseName, (completed - lastCompleted) * 1e9 / (now - lastAt),
                                completed, sum(LoopStats.P_ERRORS), sum(LoopStats.P_BUSY), sum(LoopStats.P_OPEN));
                    }
                    lastCompleted = completed;
                    lastAt = now;
                }
            }
        }
    }
}
