/**
 * The load generator behind {@code scripts/loadgen} and {@code scripts/bench}: whole exchanges over
 * HTTP/1.1, measured the way a caller of an LLM API experiences them.
 *
 * <ul>
 *   <li>{@link io.modelgateway.bench.loadgen.LoadGenerator} — the command line;
 *       {@link io.modelgateway.bench.loadgen.LoadOptions} parses it (loopback targets only).</li>
 *   <li>{@link io.modelgateway.bench.loadgen.LoadRun} — connects, warms up, measures, stops; the main
 *       thread drives the phases and prints progress, the event loops do everything else.</li>
 *   <li>{@link io.modelgateway.bench.loadgen.Connection} — one keep-alive connection: sends, reads,
 *       classifies the answer, sends again (closed loop) or on its schedule (open loop, latency from the
 *       scheduled time, as wrk2 corrects for coordinated omission); reconnects when its channel closes.</li>
 *   <li>{@link io.modelgateway.bench.loadgen.SseScanner} — finds SSE events in body chunks without
 *       decoding them: content events (time to first token, inter-token latency), the terminal event,
 *       error events, for both API styles.</li>
 *   <li>{@link io.modelgateway.bench.loadgen.LoopStats} — per event loop histograms and counters, no
 *       sharing while the run lasts; {@link io.modelgateway.bench.loadgen.LoadResult} merges them and
 *       prints the table, the JSON and the {@code .hgrm} files.</li>
 *   <li>{@link io.modelgateway.bench.loadgen.BenchReport} — the tables of {@code scripts/bench}, from
 *       the JSON results of a run; {@link io.modelgateway.bench.loadgen.SoakReport} — the per-workload
 *       verdict of {@code scripts/soak} (what the callers saw and what the gateway logged, against what the
 *       faults demand).</li>
 * </ul>
 *
 * <p>Cost per request, so the generator is not what is measured: the request is one pre-encoded body
 * sent as a retained duplicate with a shared header object; the answer is never aggregated or decoded
 * beyond HTTP framing; recording is a histogram update on the event loop's own histograms.
 */
package io.modelgateway.bench.loadgen;
