package io.modelgateway.bench.loadgen;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The gateway's {@code gateway_event_loop_allocated_bytes_total} read from its {@code /metrics}: two reads around the
 * measured window give the bytes its event loops allocated for the requests completed in it. Read outside the CPU
 * window, so the scrape's own cost is not counted as the requests'.
 */
final class AllocSample {
    static final String METRIC = "gateway_event_loop_allocated_bytes_total";
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private AllocSample() {
    }

    /** The counter's value, or -1 when no URL was given or it could not be read. */
    static long take(URI metrics) {
        if (metrics == null) {
            return -1;
        }
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(metrics).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? parse(r.body()) : -1;
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** The counter's value in a Prometheus text exposition, or -1 when it is not there. */
    static long parse(String text) {
        for (String line : text.split("\n")) {
            if (line.startsWith(METRIC + " ")) {
                return (long) Double.parseDouble(line.substring(METRIC.length() + 1).trim().split(" ")[0]);
            }
        }
        return -1;
    }
}
