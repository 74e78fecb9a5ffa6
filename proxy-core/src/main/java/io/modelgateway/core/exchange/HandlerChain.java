package io.modelgateway.core.exchange;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerAdapter;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandler;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandler;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelProgressivePromise;
import io.netty.channel.ChannelPromise;
import io.netty.util.Attribute;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.EventExecutor;
import java.lang.reflect.Method;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Several handlers run as one entry of the channel's pipeline: the gateway's request path (from the client
 * connection's timeouts and HTTP codec, or an HTTP/2 stream's, to the exchange: sixteen or seventeen handlers) is one
 * pipeline handler, so a request, an answer's write and every event on the connection pass between those handlers by
 * a direct call instead of Netty's walk from context to context. The
 * handlers are unchanged: each gets a context of its own ({@link Link}) that behaves as a pipeline context would
 * for the handlers around it in the chain, and hands on to the real pipeline past the chain's ends.
 *
 * <p>What a link does that Netty's context does too: an event goes to the next handler that handles it (one whose
 * class overrides the method; adapters' pass-through methods are skipped, as Netty skips them) and an outbound
 * operation to the previous one; an inbound handler that throws has its own {@code exceptionCaught} called with the
 * cause; an outbound handler that throws fails the operation's promise; a call from outside the channel's event loop
 * is run on it. {@code handlerAdded} is called on every handler in order when the chain is added, {@code
 * handlerRemoved} in reverse order when it is removed (the channel closed). What a link does not do: record leak hints
 * ({@code touch}) as messages pass between the handlers inside the chain, and let a handler be added or removed on its
 * own (the chain is built once).
 *
 * <p>Why: the request path's handlers, one pipeline context each, cost about a sixth of the gateway's user time on a
 * non-stream request in Netty's context code (finding the next context, the executor check, the hint), in profiles
 * of {@code scripts/bench profile} (proxy-bench/README.md). Event-loop confined; one per channel (its handlers may be
 * shared between chains).
 */
public final class HandlerChain extends ChannelDuplexHandler {
    private static final Logger LOG = Logger.getLogger(HandlerChain.class.getName());

    static final int REGISTERED = 1;
    static final int UNREGISTERED = 1 << 1;
    static final int ACTIVE = 1 << 2;
    static final int INACTIVE = 1 << 3;
    static final int READ = 1 << 4;
    static final int READ_COMPLETE = 1 << 5;
    static final int USER_EVENT = 1 << 6;
    static final int WRITABILITY = 1 << 7;
    static final int EXCEPTION = 1 << 8;
    static final int BIND = 1 << 9;
    static final int CONNECT = 1 << 10;
    static final int DISCONNECT = 1 << 11;
    static final int CLOSE = 1 << 12;
    static final int DEREGISTER = 1 << 13;
    static final int OUTBOUND_READ = 1 << 14;
    static final int WRITE = 1 << 15;
    static final int FLUSH = 1 << 16;

    /** Which events a handler class handles, worked out once per class. */
    private static final ClassValue<Integer> MASKS = new ClassValue<>() {
        @Override
        protected Integer computeValue(Class<?> type) {
            return mask(type);
        }
    };

    private final Link[] links;
    /** The first link that handles each of the frequent events, the last for the frequent operations; null: none. */
    private final Link firstRead;
    private final Link firstReadComplete;
    private final Link firstUserEvent;
    private final Link lastWrite;
    private final Link lastFlush;
    /** The chain's own context in the real pipeline, and what every link answers from it, read once. */
    private ChannelHandlerContext ctx;
    private Channel channel;
    private EventExecutor executor;
    private ChannelPromise voidPromise;

    private HandlerChain(List<String> names, List<ChannelHandler> handlers) {
        links = new Link[handlers.size()];
        for (int i = 0; i < links.length; i++) {
            ChannelHandler h = handlers.get(i);
            links[i] = new Link(i, names.get(i), h, MASKS.get(h.getClass()));
        }
        for (Link l : links) {
            l.nextRead = after(l.index, READ);
            l.nextReadComplete = after(l.index, READ_COMPLETE);
            l.nextUserEvent = after(l.index, USER_EVENT);
            l.previousWrite = before(l.index, WRITE);
            l.previousFlush = before(l.index, FLUSH);
        }
        firstRead = after(-1, READ);
        firstReadComplete = after(-1, READ_COMPLETE);
        firstUserEvent = after(-1, USER_EVENT);
        lastWrite = before(links.length, WRITE);
        lastFlush = before(links.length, FLUSH);
    }

    /** An empty chain to add handlers to, in order. */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds a chain, first handler first. */
    public static final class Builder {
        private final List<String> names = new ArrayList<>();
        private final List<ChannelHandler> handlers = new ArrayList<>();

        private Builder() {
        }

        public Builder add(String name, ChannelHandler handler) {
            if (names.contains(name)) {
                throw new IllegalArgumentException("duplicate handler name: " + name);
            }
            names.add(name);
            handlers.add(handler);
            return this;
        }

        public HandlerChain build() {
            return new HandlerChain(names, handlers);
        }
    }

    /** The handlers' names, in order. */
    public List<String> names() {
        List<String> names = new ArrayList<>(links.length);
        for (Link l : links) {
            names.add(l.name);
        }
        return names;
    }

    /** The handler of that name, or null. */
    public ChannelHandler get(String name) {
        Link l = link(name);
        return l == null ? null : l.handler;
    }

    /** The context the handler of that name is called with, or null. */
    public ChannelHandlerContext context(String name) {
        return link(name);
    }

    /**
     * The handler named {@code name} beside the one {@code ctx} belongs to: in the same chain when {@code ctx} is a
     * chain's link, else in {@code ctx}'s pipeline. Null when there is none.
     */
    public static ChannelHandler find(ChannelHandlerContext ctx, String name) {
        if (ctx instanceof Link l) {
            return l.chain().get(name);
        }
        ChannelHandler h = ctx.pipeline().get(name);
        HandlerChain chain = h == null ? ctx.pipeline().get(HandlerChain.class) : null;
        return chain != null ? chain.get(name) : h;
    }

    private Link link(String name) {
        for (Link l : links) {
            if (l.name.equals(name)) {
                return l;
            }
        }
        return null;
    }

    /** The first link after index {@code i} that handles {@code event}, or null. */
    private Link after(int i, int event) {
        for (int j = i + 1; j < links.length; j++) {
            if ((links[j].mask & event) != 0) {
                return links[j];
            }
        }
        return null;
    }

    /** The last link before index {@code i} that handles {@code op}, or null. */
    private Link before(int i, int op) {
        for (int j = i - 1; j >= 0; j--) {
            if ((links[j].mask & op) != 0) {
                return links[j];
            }
        }
        return null;
    }

    // ---- the chain as one handler of the real pipeline: events enter at the first link, operations at the last ----

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        this.ctx = ctx;
        this.channel = ctx.channel();
        this.executor = ctx.executor();
        this.voidPromise = ctx.voidPromise();
        for (Link l : links) {
            l.handler.handlerAdded(l);
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) throws Exception {
        Throwable failure = null;
        for (int i = links.length - 1; i >= 0; i--) {
            Link l = links[i];
            l.removed = true;
            try {
                l.handler.handlerRemoved(l);
            } catch (Throwable t) {
                if (failure == null) {
                    failure = t;
                } else {
                    failure.addSuppressed(t);
                }
            }
        }
        if (failure instanceof Exception e) {
            throw e;
        } else if (failure instanceof Error e) {
            throw e;
        }
    }

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) {
        registered(after(-1, REGISTERED));
    }

    @Override
    public void channelUnregistered(ChannelHandlerContext ctx) {
        unregistered(after(-1, UNREGISTERED));
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        active(after(-1, ACTIVE));
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        inactive(after(-1, INACTIVE));
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        deliverRead(firstRead, msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        readComplete(firstReadComplete);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        userEvent(firstUserEvent, evt);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        writability(after(-1, WRITABILITY));
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        exception(after(-1, EXCEPTION), cause);
    }

    @Override
    public void bind(ChannelHandlerContext ctx, SocketAddress local, ChannelPromise promise) {
        bind(before(links.length, BIND), local, promise);
    }

    @Override
    public void connect(ChannelHandlerContext ctx, SocketAddress remote, SocketAddress local, ChannelPromise promise) {
        connect(before(links.length, CONNECT), remote, local, promise);
    }

    @Override
    public void disconnect(ChannelHandlerContext ctx, ChannelPromise promise) {
        disconnect(before(links.length, DISCONNECT), promise);
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        close(before(links.length, CLOSE), promise);
    }

    @Override
    public void deregister(ChannelHandlerContext ctx, ChannelPromise promise) {
        deregister(before(links.length, DEREGISTER), promise);
    }

    @Override
    public void read(ChannelHandlerContext ctx) {
        outboundRead(before(links.length, OUTBOUND_READ));
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        write(lastWrite, msg, promise);
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        flush(lastFlush);
    }

    // ---- calling one link's handler (null: the chain's end, so the real pipeline's next or previous handler) ----

    private void registered(Link l) {
        if (l == null) {
            ctx.fireChannelRegistered();
            return;
        }
        try {
            l.in.channelRegistered(l);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    private void unregistered(Link l) {
        if (l == null) {
            ctx.fireChannelUnregistered();
            return;
        }
        try {
            l.in.channelUnregistered(l);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    private void active(Link l) {
        if (l == null) {
            ctx.fireChannelActive();
            return;
        }
        try {
            l.in.channelActive(l);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    private void inactive(Link l) {
        if (l == null) {
            ctx.fireChannelInactive();
            return;
        }
        try {
            l.in.channelInactive(l);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    private void deliverRead(Link l, Object msg) {
        if (l == null) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            l.in.channelRead(l, msg);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    private void readComplete(Link l) {
        if (l == null) {
            ctx.fireChannelReadComplete();
            return;
        }
        try {
            l.in.channelReadComplete(l);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    private void userEvent(Link l, Object evt) {
        if (l == null) {
            ctx.fireUserEventTriggered(evt);
            return;
        }
        try {
            l.in.userEventTriggered(l, evt);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    private void writability(Link l) {
        if (l == null) {
            ctx.fireChannelWritabilityChanged();
            return;
        }
        try {
            l.in.channelWritabilityChanged(l);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    private void exception(Link l, Throwable cause) {
        if (l == null) {
            ctx.fireExceptionCaught(cause);
            return;
        }
        try {
            l.handler.exceptionCaught(l, cause);
        } catch (Throwable t) {
            LOG.log(Level.WARNING, "exceptionCaught of " + l.name + " threw while handling " + cause, t);
        }
    }

    private void bind(Link l, SocketAddress local, ChannelPromise promise) {
        if (l == null) {
            ctx.bind(local, promise);
            return;
        }
        try {
            l.out.bind(l, local, promise);
        } catch (Throwable t) {
            failed(promise, t);
        }
    }

    private void connect(Link l, SocketAddress remote, SocketAddress local, ChannelPromise promise) {
        if (l == null) {
            ctx.connect(remote, local, promise);
            return;
        }
        try {
            l.out.connect(l, remote, local, promise);
        } catch (Throwable t) {
            failed(promise, t);
        }
    }

    private void disconnect(Link l, ChannelPromise promise) {
        if (l == null) {
            ctx.disconnect(promise);
            return;
        }
        try {
            l.out.disconnect(l, promise);
        } catch (Throwable t) {
            failed(promise, t);
        }
    }

    private void close(Link l, ChannelPromise promise) {
        if (l == null) {
            ctx.close(promise);
            return;
        }
        try {
            l.out.close(l, promise);
        } catch (Throwable t) {
            failed(promise, t);
        }
    }

    private void deregister(Link l, ChannelPromise promise) {
        if (l == null) {
            ctx.deregister(promise);
            return;
        }
        try {
            l.out.deregister(l, promise);
        } catch (Throwable t) {
            failed(promise, t);
        }
    }

    private void outboundRead(Link l) {
        if (l == null) {
            ctx.read();
            return;
        }
        try {
            l.out.read(l);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    private void write(Link l, Object msg, ChannelPromise promise) {
        if (l == null) {
            ctx.write(msg, promise);
            return;
        }
        try {
            l.out.write(l, msg, promise);
        } catch (Throwable t) {
            failed(promise, t);
        }
    }

    private void flush(Link l) {
        if (l == null) {
            ctx.flush();
            return;
        }
        try {
            l.out.flush(l);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    /** As Netty does for an outbound handler that throws: the operation's promise fails. */
    private static void failed(ChannelPromise promise, Throwable t) {
        if (!promise.tryFailure(t) && !promise.isVoid()) {
            LOG.log(Level.FINE, "an operation already done failed again", t);
        }
    }

    /** The events {@code type} handles: those of its methods not inherited from Netty's pass-through adapters. */
    static int mask(Class<?> type) {
        int mask = 0;
        if (ChannelInboundHandler.class.isAssignableFrom(type)) {
            mask |= handles(type, REGISTERED, "channelRegistered");
            mask |= handles(type, UNREGISTERED, "channelUnregistered");
            mask |= handles(type, ACTIVE, "channelActive");
            mask |= handles(type, INACTIVE, "channelInactive");
            mask |= handles(type, READ, "channelRead", Object.class);
            mask |= handles(type, READ_COMPLETE, "channelReadComplete");
            mask |= handles(type, USER_EVENT, "userEventTriggered", Object.class);
            mask |= handles(type, WRITABILITY, "channelWritabilityChanged");
        }
        mask |= handles(type, EXCEPTION, "exceptionCaught", Throwable.class);
        if (ChannelOutboundHandler.class.isAssignableFrom(type)) {
            mask |= handles(type, BIND, "bind", SocketAddress.class, ChannelPromise.class);
            mask |= handles(type, CONNECT, "connect", SocketAddress.class, SocketAddress.class, ChannelPromise.class);
            mask |= handles(type, DISCONNECT, "disconnect", ChannelPromise.class);
            mask |= handles(type, CLOSE, "close", ChannelPromise.class);
            mask |= handles(type, DEREGISTER, "deregister", ChannelPromise.class);
            mask |= handles(type, OUTBOUND_READ, "read");
            mask |= handles(type, WRITE, "write", Object.class, ChannelPromise.class);
            mask |= handles(type, FLUSH, "flush");
        }
        return mask;
    }

    private static int handles(Class<?> type, int bit, String name, Class<?>... rest) {
        Class<?>[] params = new Class<?>[rest.length + 1];
        params[0] = ChannelHandlerContext.class;
        System.arraycopy(rest, 0, params, 1, rest.length);
        try {
            Method m = type.getMethod(name, params);
            Class<?> declaring = m.getDeclaringClass();
            boolean passThrough = declaring == ChannelInboundHandlerAdapter.class
                    || declaring == ChannelOutboundHandlerAdapter.class
                    || declaring == ChannelDuplexHandler.class
                    || declaring == ChannelHandlerAdapter.class;
            return passThrough ? 0 : bit;
        } catch (NoSuchMethodException e) {
            return bit; // cannot tell: call it, as Netty does when in doubt
        }
    }

    /**
     * One handler's context inside the chain: events it fires go on to the next handler in the chain (or past the
     * chain), operations it starts to the previous one (or below the chain); everything else is the chain's own
     * context's. The neighbours for the frequent events and operations are found once, when the chain is built.
     */
    final class Link implements ChannelHandlerContext {
        private final int index;
        private final String name;
        private final ChannelHandler handler;
        /** The handler as each kind, or null when it is not of that kind (then the mask has none of its events). */
        private final ChannelInboundHandler in;
        private final ChannelOutboundHandler out;
        private final int mask;
        private Link nextRead;
        private Link nextReadComplete;
        private Link nextUserEvent;
        private Link previousWrite;
        private Link previousFlush;
        private boolean removed;

        Link(int index, String name, ChannelHandler handler, int mask) {
            this.index = index;
            this.name = name;
            this.handler = handler;
            this.in = handler instanceof ChannelInboundHandler h ? h : null;
            this.out = handler instanceof ChannelOutboundHandler h ? h : null;
            this.mask = mask;
        }

        HandlerChain chain() {
            return HandlerChain.this;
        }

        /** As Netty does for a handler that throws from an event: its own exceptionCaught is told. */
        void handlerFailed(Throwable t) {
            try {
                handler.exceptionCaught(this, t);
            } catch (Throwable again) {
                LOG.log(Level.WARNING, "exceptionCaught of " + name + " threw while handling " + t, again);
            }
        }

        private boolean inLoop() {
            return executor.inEventLoop();
        }

        @Override
        public Channel channel() {
            return channel;
        }

        @Override
        public EventExecutor executor() {
            return executor;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public ChannelHandler handler() {
            return handler;
        }

        @Override
        public boolean isRemoved() {
            return removed || ctx.isRemoved();
        }

        @Override
        public ChannelHandlerContext fireChannelRegistered() {
            run(() -> registered(after(index, REGISTERED)));
            return this;
        }

        @Override
        public ChannelHandlerContext fireChannelUnregistered() {
            run(() -> unregistered(after(index, UNREGISTERED)));
            return this;
        }

        @Override
        public ChannelHandlerContext fireChannelActive() {
            run(() -> active(after(index, ACTIVE)));
            return this;
        }

        @Override
        public ChannelHandlerContext fireChannelInactive() {
            run(() -> inactive(after(index, INACTIVE)));
            return this;
        }

        @Override
        public ChannelHandlerContext fireExceptionCaught(Throwable cause) {
            run(() -> exception(after(index, EXCEPTION), cause));
            return this;
        }

        @Override
        public ChannelHandlerContext fireUserEventTriggered(Object evt) {
            if (inLoop()) {
                userEvent(nextUserEvent, evt);
            } else {
                executor().execute(() -> userEvent(nextUserEvent, evt));
            }
            return this;
        }

        @Override
        public ChannelHandlerContext fireChannelRead(Object msg) {
            if (inLoop()) {
                deliverRead(nextRead, msg);
            } else {
                executor().execute(() -> deliverRead(nextRead, msg));
            }
            return this;
        }

        @Override
        public ChannelHandlerContext fireChannelReadComplete() {
            if (inLoop()) {
                readComplete(nextReadComplete);
            } else {
                executor().execute(() -> readComplete(nextReadComplete));
            }
            return this;
        }

        @Override
        public ChannelHandlerContext fireChannelWritabilityChanged() {
            run(() -> writability(after(index, WRITABILITY)));
            return this;
        }

        @Override
        public ChannelFuture bind(SocketAddress local, ChannelPromise promise) {
            run(() -> HandlerChain.this.bind(before(index, BIND), local, promise));
            return promise;
        }

        @Override
        public ChannelFuture connect(SocketAddress remote, ChannelPromise promise) {
            return connect(remote, null, promise);
        }

        @Override
        public ChannelFuture connect(SocketAddress remote, SocketAddress local, ChannelPromise promise) {
            run(() -> HandlerChain.this.connect(before(index, CONNECT), remote, local, promise));
            return promise;
        }

        @Override
        public ChannelFuture disconnect(ChannelPromise promise) {
            run(() -> HandlerChain.this.disconnect(before(index, DISCONNECT), promise));
            return promise;
        }

        @Override
        public ChannelFuture close(ChannelPromise promise) {
            run(() -> HandlerChain.this.close(before(index, CLOSE), promise));
            return promise;
        }

        @Override
        public ChannelFuture deregister(ChannelPromise promise) {
            run(() -> HandlerChain.this.deregister(before(index, DEREGISTER), promise));
            return promise;
        }

        @Override
        public ChannelHandlerContext read() {
            run(() -> outboundRead(before(index, OUTBOUND_READ)));
            return this;
        }

        @Override
        public ChannelFuture write(Object msg, ChannelPromise promise) {
            if (inLoop()) {
                HandlerChain.this.write(previousWrite, msg, promise);
            } else {
                executor().execute(() -> HandlerChain.this.write(previousWrite, msg, promise));
            }
            return promise;
        }

        @Override
        public ChannelHandlerContext flush() {
            if (inLoop()) {
                HandlerChain.this.flush(previousFlush);
            } else {
                executor().execute(() -> HandlerChain.this.flush(previousFlush));
            }
            return this;
        }

        @Override
        public ChannelFuture writeAndFlush(Object msg, ChannelPromise promise) {
            if (inLoop()) {
                HandlerChain.this.write(previousWrite, msg, promise);
                HandlerChain.this.flush(previousFlush);
            } else {
                executor().execute(() -> {
                    HandlerChain.this.write(previousWrite, msg, promise);
                    HandlerChain.this.flush(previousFlush);
                });
            }
            return promise;
        }

        /** The less frequent events and operations: on the loop now, or queued to it. */
        private void run(Runnable call) {
            if (inLoop()) {
                call.run();
            } else {
                executor().execute(call);
            }
        }

        @Override
        public ChannelPipeline pipeline() {
            return ctx.pipeline();
        }

        @Override
        public ByteBufAllocator alloc() {
            return ctx.alloc();
        }

        @Override
        public ChannelPromise newPromise() {
            return ctx.newPromise();
        }

        @Override
        public ChannelProgressivePromise newProgressivePromise() {
            return ctx.newProgressivePromise();
        }

        @Override
        public ChannelFuture newSucceededFuture() {
            return ctx.newSucceededFuture();
        }

        @Override
        public ChannelFuture newFailedFuture(Throwable cause) {
            return ctx.newFailedFuture(cause);
        }

        @Override
        public ChannelPromise voidPromise() {
            return voidPromise;
        }

        @Override
        public <T> Attribute<T> attr(AttributeKey<T> key) {
            return channel.attr(key);
        }

        @Override
        public <T> boolean hasAttr(AttributeKey<T> key) {
            return channel.hasAttr(key);
        }

        @Override
        public String toString() {
            return "HandlerChain.Link(" + name + ", " + channel + ")";
        }
    }
}
