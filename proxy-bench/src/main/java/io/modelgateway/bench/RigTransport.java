package io.modelgateway.bench;

/**
 * The transport of the load generator: epoll unless {@code -Dgateway.transport} names another. The gateway's default is
 * io_uring where the kernel offers it; the load generator stays on epoll so that what it costs on the client's CPU, and
 * its busy polling (an epoll loop that never sleeps), do not change with the gateway's default. The blast upstream
 * does not use this: it runs on the gateway's default, where it is cheaper (see its {@code main}).
 */
public final class RigTransport {
    private RigTransport() {
    }

    /** Call first thing in a bench process's {@code main}, before any event loop is made. */
    public static void epollUnlessAsked() {
        if (System.getProperty("gateway.transport") == null) {
            System.setProperty("gateway.transport", "epoll");
        }
    }
}
