package io.modelgateway.bench.loadgen;

import io.modelgateway.bench.RigTransport;
import java.io.IOException;

/**
 * {@code scripts/loadgen}: an HTTP/1.1 load generator for the gateway's and the providers' endpoints,
 * closed or open loop, that understands SSE answers of both API styles. See {@link LoadOptions#USAGE}.
 *
 * <p>Exit status: 0 when the run completed (errors are reported, not fatal), 1 when no request at all
 * succeeded in the window, 2 for a bad command line.
 */
public final class LoadGenerator {
    private LoadGenerator() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        RigTransport.epollUnlessAsked();
        LoadOptions options;
        try {
            options = LoadOptions.parse(args);
        } catch (LoadOptions.HelpRequested e) {
            System.out.println(LoadOptions.USAGE);
            return;
        } catch (IllegalArgumentException e) {
            System.err.println("loadgen: " + e.getMessage());
            System.err.println(LoadOptions.USAGE);
            System.exit(2);
            return;
        }
        LoadResult result;
        try {
            result = options.wrk() ? WrkRun.execute(options, options.quiet() ? null : System.err)
                    : LoadRun.execute(options, options.quiet() ? null : System.err);
        } catch (IllegalStateException | IOException e) { // --wrk: a failed probe, no wrk, wrk's own failure
            System.err.println("loadgen: " + e.getMessage());
            System.exit(1);
            return;
        }
        result.printTable(System.out);
        if (options.json() != null) {
            result.writeJson(options.json());
        }
        if (options.hgrmPrefix() != null) {
            result.writeHgrm(options.hgrmPrefix());
        }
        if (options.html() != null) {
            result.writeHtml(options.html());
        }
        System.out.flush();
        // The event loops are daemon threads and already shut down; exit explicitly all the same.
        System.exit(result.completed > 0 ? 0 : 1);
    }
}
