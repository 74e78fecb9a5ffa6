package io.modelgateway.core.simulator;

import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.config.SimulatorSettings;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The in-process simulators of a server, one per distinct settings. Keyed by settings (a record), so a reload that
 * keeps a simulator's settings keeps its engine too. Thread-safe.
 */
public final class SimulatorEngines {
    private final Map<SimulatorSettings, SimulatorEngine> engines = new ConcurrentHashMap<>();

    /** The engine of a provider of type simulator. */
    public SimulatorEngine of(ProviderConfig provider) {
        return engines.computeIfAbsent(provider.simulator(), SimulatorEngine::new);
    }
}
