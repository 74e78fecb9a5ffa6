package io.modelgateway.core.upstream;

import io.netty.handler.codec.http.HttpObject;

/** The exchange currently using an upstream connection. All calls happen on that connection's event loop. */
public interface UpstreamListener {
    /** A response part; the listener owns it (writes or releases it). */
    void onUpstreamMessage(HttpObject msg);

    /** The end of one read batch: a good moment to flush what was written to the client. */
    void onUpstreamReadComplete();

    /** The connection closed or failed ({@code cause} null for a plain close). */
    void onUpstreamClosed(Throwable cause);
}
