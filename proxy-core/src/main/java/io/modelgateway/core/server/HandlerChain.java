package io.modelgateway.core.server;

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
 * Several handlers run as one entry of the channel's pipeline: the gateway's request path (the answer boundary to the
 * exchange, fourteen handlers) is one pipeline handler, so a request, an answer's write and every event on the
 * connection pass between those handlers by a direct call instead of Netty's walk from context to context. The
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
    /** The chain's own context in the real pipeline. */
    private ChannelHandlerContext ctx;

    private HandlerChain(List<String> names, List<ChannelHandler> handlers) {
        links = new Link[handlers.size()];
        for (int i = 0; i < links.length; i++) {
            ChannelHandler h = handlers.get(i);
            links[i] = new Link(i, names.get(i), h, MASKS.get(h.getClass()));
        }
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
        return ctx instanceof Link l ? l.chain().get(name) : ctx.pipeline().get(name);
    }

    private Link link(String name) {
        for (Link l : links) {
            if (l.name.equals(name)) {
                return l;
            }
        }
        return null;
    }

    // ---- the chain as one handler of the real pipeline: events enter at the first link, operations at the last ----

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        this.ctx = ctx;
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
        fireRegistered(0);
    }

    @Override
    public void channelUnregistered(ChannelHandlerContext ctx) {
        fireUnregistered(0);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        fireActive(0);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        fireInactive(0);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        fireRead(0, msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        fireReadComplete(0);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        fireUserEvent(0, evt);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        fireWritability(0);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        fireException(0, cause);
    }

    @Override
    public void bind(ChannelHandlerContext ctx, SocketAddress local, ChannelPromise promise) {
        bind(links.length - 1, local, promise);
    }

    @Override
    public void connect(ChannelHandlerContext ctx, SocketAddress remote, SocketAddress local, ChannelPromise promise) {
        connect(links.length - 1, remote, local, promise);
    }

    @Override
    public void disconnect(ChannelHandlerContext ctx, ChannelPromise promise) {
        disconnect(links.length - 1, promise);
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        close(links.length - 1, promise);
    }

    @Override
    public void deregister(ChannelHandlerContext ctx, ChannelPromise promise) {
        deregister(links.length - 1, promise);
    }

    @Override
    public void read(ChannelHandlerContext ctx) {
        read(links.length - 1);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        write(links.length - 1, msg, promise);
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        flush(links.length - 1);
    }

    // ---- dispatch: the next link from `from` on that handles an event, the previous one from `from` down for an op ----

    private int next(int from, int event) {
        while (from < links.length && (links[from].mask & event) == 0) {
            from++;
        }
        return from;
    }

    private int previous(int from, int op) {
        while (from >= 0 && (links[from].mask & op) == 0) {
            from--;
        }
        return from;
    }

    private void fireRegistered(int from) {
        int i = next(from, REGISTERED);
        if (i == links.length) {
            ctx.fireChannelRegistered();
            return;
        }
        Link l = links[i];
        try {
            l.inbound().channelRegistered(l);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    private void fireUnregistered(int from) {
        int i = next(from, UNREGISTERED);
        if (i == links.length) {
            ctx.fireChannelUnregistered();
            return;
        }
        Link l = links[i];
        try {
            l.inbound().channelUnregistered(l);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    private void fireActive(int from) {
        int i = next(from, ACTIVE);
        if (i == links.length) {
            ctx.fireChannelActive();
            return;
        }
        Link l = links[i];
        try {
            l.inbound().channelActive(l);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    private void fireInactive(int from) {
        int i = next(from, INACTIVE);
        if (i == links.length) {
            ctx.fireChannelInactive();
            return;
        }
        Link l = links[i];
        try {
            l.inbound().channelInactive(l);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    private void fireRead(int from, Object msg) {
        int i = next(from, READ);
        if (i == links.length) {
            ctx.fireChannelRead(msg);
            return;
        }
        Link l = links[i];
        try {
            l.inbound().channelRead(l, msg);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    private void fireReadComplete(int from) {
        int i = next(from, READ_COMPLETE);
        if (i == links.length) {
            ctx.fireChannelReadComplete();
            return;
        }
        Link l = links[i];
        try {
            l.inbound().channelReadComplete(l);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    private void fireUserEvent(int from, Object evt) {
        int i = next(from, USER_EVENT);
        if (i == links.length) {
            ctx.fireUserEventTriggered(evt);
            return;
        }
        Link l = links[i];
        try {
            l.inbound().userEventTriggered(l, evt);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    private void fireWritability(int from) {
        int i = next(from, WRITABILITY);
        if (i == links.length) {
            ctx.fireChannelWritabilityChanged();
            return;
        }
        Link l = links[i];
        try {
            l.inbound().channelWritabilityChanged(l);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    private void fireException(int from, Throwable cause) {
        int i = next(from, EXCEPTION);
        if (i == links.length) {
            ctx.fireExceptionCaught(cause);
            return;
        }
        Link l = links[i];
        try {
            l.handler.exceptionCaught(l, cause);
        } catch (Throwable t) {
            LOG.log(Level.WARNING, "exceptionCaught of " + l.name + " threw while handling " + cause, t);
        }
    }

    private void bind(int from, SocketAddress local, ChannelPromise promise) {
        int i = previous(from, BIND);
        if (i < 0) {
            ctx.bind(local, promise);
            return;
        }
        Link l = links[i];
        try {
            l.outbound().bind(l, local, promise);
        } catch (Throwable t) {
            failed(promise, t);
        }
    }

    private void connect(int from, SocketAddress remote, SocketAddress local, ChannelPromise promise) {
        int i = previous(from, CONNECT);
        if (i < 0) {
            ctx.connect(remote, local, promise);
            return;
        }
        Link l = links[i];
        try {
            l.outbound().connect(l, remote, local, promise);
        } catch (Throwable t) {
            failed(promise, t);
        }
    }

    private void disconnect(int from, ChannelPromise promise) {
        int i = previous(from, DISCONNECT);
        if (i < 0) {
            ctx.disconnect(promise);
            return;
        }
        Link l = links[i];
        try {
            l.outbound().disconnect(l, promise);
        } catch (Throwable t) {
            failed(promise, t);
        }
    }

    private void close(int from, ChannelPromise promise) {
        int i = previous(from, CLOSE);
        if (i < 0) {
            ctx.close(promise);
            return;
        }
        Link l = links[i];
        try {
            l.outbound().close(l, promise);
        } catch (Throwable t) {
            failed(promise, t);
        }
    }

    private void deregister(int from, ChannelPromise promise) {
        int i = previous(from, DEREGISTER);
        if (i < 0) {
            ctx.deregister(promise);
            return;
        }
        Link l = links[i];
        try {
            l.outbound().deregister(l, promise);
        } catch (Throwable t) {
            failed(promise, t);
        }
    }

    private void read(int from) {
        int i = previous(from, OUTBOUND_READ);
        if (i < 0) {
            ctx.read();
            return;
        }
        Link l = links[i];
        try {
            l.outbound().read(l);
        } catch (Throwable t) {
            l.handlerFailed(t);
        }
    }

    private void write(int from, Object msg, ChannelPromise promise) {
        int i = previous(from, WRITE);
        if (i < 0) {
            ctx.write(msg, promise);
            return;
        }
        Link l = links[i];
        try {
            l.outbound().write(l, msg, promise);
        } catch (Throwable t) {
            failed(promise, t);
        }
    }

    private void flush(int from) {
        int i = previous(from, FLUSH);
        if (i < 0) {
            ctx.flush();
            return;
        }
        Link l = links[i];
        try {
            l.outbound().flush(l);
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
     * context's.
     */
    final class Link implements ChannelHandlerContext {
        private final int index;
        private final String name;
        private final ChannelHandler handler;
        private final int mask;
        private boolean removed;

        Link(int index, String name, ChannelHandler handler, int mask) {
            this.index = index;
            this.name = name;
            this.handler = handler;
            this.mask = mask;
        }

        HandlerChain chain() {
            return HandlerChain.this;
        }

        ChannelInboundHandler inbound() {
            return (ChannelInboundHandler) handler;
        }

        ChannelOutboundHandler outbound() {
            return (ChannelOutboundHandler) handler;
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
            return ctx.executor().inEventLoop();
        }

        @Override
        public Channel channel() {
            return ctx.channel();
        }

        @Override
        public EventExecutor executor() {
            return ctx.executor();
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
            if (inLoop()) {
                fireRegistered(index + 1);
            } else {
                executor().execute(() -> fireRegistered(index + 1));
            }
            return this;
        }

        @Override
        public ChannelHandlerContext fireChannelUnregistered() {
            if (inLoop()) {
                fireUnregistered(index + 1);
            } else {
                executor().execute(() -> fireUnregistered(index + 1));
            }
            return this;
        }

        @Override
        public ChannelHandlerContext fireChannelActive() {
            if (inLoop()) {
                fireActive(index + 1);
            } else {
                executor().execute(() -> fireActive(index + 1));
            }
            return this;
        }

        @Override
        public ChannelHandlerContext fireChannelInactive() {
            if (inLoop()) {
                fireInactive(index + 1);
            } else {
                executor().execute(() -> fireInactive(index + 1));
            }
            return this;
        }

        @Override
        public ChannelHandlerContext fireExceptionCaught(Throwable cause) {
            if (inLoop()) {
                fireException(index + 1, cause);
            } else {
                executor().execute(() -> fireException(index + 1, cause));
            }
            return this;
        }

        @Override
        public ChannelHandlerContext fireUserEventTriggered(Object evt) {
            if (inLoop()) {
                fireUserEvent(index + 1, evt);
            } else {
                executor().execute(() -> fireUserEvent(index + 1, evt));
            }
            return this;
        }

        @Override
        public ChannelHandlerContext fireChannelRead(Object msg) {
            if (inLoop()) {
                fireRead(index + 1, msg);
            } else {
                executor().execute(() -> fireRead(index + 1, msg));
            }
            return this;
        }

        @Override
        public ChannelHandlerContext fireChannelReadComplete() {
            if (inLoop()) {
                fireReadComplete(index + 1);
            } else {
                executor().execute(() -> fireReadComplete(index + 1));
            }
            return this;
        }

        @Override
        public ChannelHandlerContext fireChannelWritabilityChanged() {
            if (inLoop()) {
                fireWritability(index + 1);
            } else {
                executor().execute(() -> fireWritability(index + 1));
            }
            return this;
        }

        @Override
        public ChannelFuture bind(SocketAddress local, ChannelPromise promise) {
            if (inLoop()) {
                HandlerChain.this.bind(index - 1, local, promise);
            } else {
                executor().execute(() -> HandlerChain.this.bind(index - 1, local, promise));
            }
            return promise;
        }

        @Override
        public ChannelFuture connect(SocketAddress remote, ChannelPromise promise) {
            return connect(remote, null, promise);
        }

        @Override
        public ChannelFuture connect(SocketAddress remote, SocketAddress local, ChannelPromise promise) {
            if (inLoop()) {
                HandlerChain.this.connect(index - 1, remote, local, promise);
            } else {
                executor().execute(() -> HandlerChain.this.connect(index - 1, remote, local, promise));
            }
            return promise;
        }

        @Override
        public ChannelFuture disconnect(ChannelPromise promise) {
            if (inLoop()) {
                HandlerChain.this.disconnect(index - 1, promise);
            } else {
                executor().execute(() -> HandlerChain.this.disconnect(index - 1, promise));
            }
            return promise;
        }

        @Override
        public ChannelFuture close(ChannelPromise promise) {
            if (inLoop()) {
                HandlerChain.this.close(index - 1, promise);
            } else {
                executor().execute(() -> HandlerChain.this.close(index - 1, promise));
            }
            return promise;
        }

        @Override
        public ChannelFuture deregister(ChannelPromise promise) {
            if (inLoop()) {
                HandlerChain.this.deregister(index - 1, promise);
            } else {
                executor().execute(() -> HandlerChain.this.deregister(index - 1, promise));
            }
            return promise;
        }

        @Override
        public ChannelHandlerContext read() {
            if (inLoop()) {
                HandlerChain.this.read(index - 1);
            } else {
                executor().execute(() -> HandlerChain.this.read(index - 1));
            }
            return this;
        }

        @Override
        public ChannelFuture write(Object msg, ChannelPromise promise) {
            if (inLoop()) {
                HandlerChain.this.write(index - 1, msg, promise);
            } else {
                executor().execute(() -> HandlerChain.this.write(index - 1, msg, promise));
            }
            return promise;
        }

        @Override
        public ChannelHandlerContext flush() {
            if (inLoop()) {
                HandlerChain.this.flush(index - 1);
            } else {
                executor().execute(() -> HandlerChain.this.flush(index - 1));
            }
            return this;
        }

        @Override
        public ChannelFuture writeAndFlush(Object msg, ChannelPromise promise) {
            if (inLoop()) {
                HandlerChain.this.write(index - 1, msg, promise);
                HandlerChain.this.flush(index - 1);
            } else {
                executor().execute(() -> {
                    HandlerChain.this.write(index - 1, msg, promise);
                    HandlerChain.this.flush(index - 1);
                });
            }
            return promise;
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
            return ctx.voidPromise();
        }

        @Override
        public <T> Attribute<T> attr(AttributeKey<T> key) {
            return ctx.channel().attr(key);
        }

        @Override
        public <T> boolean hasAttr(AttributeKey<T> key) {
            return ctx.channel().hasAttr(key);
        }

        @Override
        public String toString() {
            return "HandlerChain.Link(" + name + ", " + ctx.channel() + ")";
        }
    }
}
