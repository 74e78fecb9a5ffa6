package io.modelgateway.bench;

/**
 * The transport of the bench's own processes (the load generator, the blast upstream): epoll unless
 * {@code -Dgateway.transport} names another. The gateway's default is io_uring where the kernel offers it; the rig
 * stays on epoll so that what it costs on the client's CPU, and the load generator's busy polling (an epoll loop that
 * never sleeps), do not change with the gateway's default.
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
