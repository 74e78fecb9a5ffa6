/**
 * The gateway's YAML config: read once by {@link io.modelgateway.core.config.ConfigLoader}, checked in
 * full, and published as one immutable {@link io.modelgateway.core.config.GatewayConfig}. A reload
 * builds a new object and swaps it in whole ({@link io.modelgateway.core.config.ConfigReloader} does so when
 * the file changes or on SIGHUP); nothing here is mutated after load.
 *
 * <p>Loading does file I/O and hashing, so it runs off the event loops. Every check failure is a
 * {@link io.modelgateway.core.config.ConfigException} whose message starts with the field's path and
 * ends with {@code (file:line)}. Secrets (gateway keys, provider API keys, extra header values) never
 * appear in a message, a log line or a {@code toString()}.
 *
 * <p>Nothing here imports another package of {@code proxy-core}: the simulator's per-provider settings
 * ({@link io.modelgateway.core.config.SimulatorSettings}, with its {@link io.modelgateway.core.config.FaultSpec})
 * live here because the config holds them, and the simulator reads them from here.
 */
package io.modelgateway.core.config;
