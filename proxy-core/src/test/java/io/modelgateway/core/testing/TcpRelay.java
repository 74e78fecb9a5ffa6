package io.modelgateway.core.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A plain TCP relay on a free loopback port to a target port, for a test that cuts one client off from a server
 * and nobody else: {@link #cut} closes every relayed connection and refuses new ones, as if the process on this
 * side had died (nothing more it sent arrives). Blocking sockets, two daemon threads per connection.
 */
public final class TcpRelay implements AutoCloseable {
    private final ServerSocket listener;
    private final int target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean cut;

    public TcpRelay(int target) throws IOException {
        this.target = target;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::accept, "tcp-relay-accept");
        accept.setDaemon(true);
        accept.start();
    }

    public int port() {
        return listener.getLocalPort();
    }

    private void accept() {
        while (!cut) {
            try {
                Socket in = listener.accept();
                if (cut) {
                    in.close();
                    return;
                }
                Socket out = new Socket();
                out.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), target), 2000);
                sockets.add(in);
                sockets.add(out);
                pump(in, out);
                pump(out, in);
            } catch (IOException e) {
                if (cut) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to) throws IOException {
        InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream();
        Thread t = new Thread(() -> {
            byte[] buf = new byte[8192];
            try {
                int n;
                while (!cut && (n = in.read(buf)) >= 0) {
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException ignored) {
                // closed by cut() or by either side
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "tcp-relay-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Cuts every relayed connection and refuses new ones, for good. */
    public void cut() {
        cut = true;
        closeQuietly(listener);
        sockets.forEach(TcpRelay::closeQuietly);
    }

    @Override
    public void close() {
        cut();
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // already closed
        }
    }
}
