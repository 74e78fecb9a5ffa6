package io.modelgateway.core.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * Which tools a simulated turn calls, the same in every style (contracts 3.5, 5.6, 12.1): none; the named one; or —
 * for auto, unless the conversation just delivered a tool result, and for required (Anthropic's {@code any}) — the
 * first tool offered, or the first two when two or more are and parallel calls are allowed. The styles differ only in
 * how a request says it, which each responder reads.
 */
final class ToolChoice {
    private ToolChoice() {
    }

    /** What {@code tool_choice} asks. */
    enum Mode { NONE, AUTO, REQUIRED, NAMED }

    /** One style's tool definition, at {@code path} (an object): the tool, or null for one never called. */
    @FunctionalInterface
    interface ToolReader {
        Turn.ToolDef read(JsonNode tool, String path);
    }

    /** The tools offered: each {@code tools[]} entry must be an object; those {@code reader} skips are left out. */
    static List<Turn.ToolDef> offered(RequestReader r, JsonNode root, ToolReader reader) {
        JsonNode tools = r.optArray(root, "tools", "tools");
        List<Turn.ToolDef> defs = new ArrayList<>();
        if (tools != null) {
            for (int i = 0; i < tools.size(); i++) {
                JsonNode t = tools.get(i);
                String path = r.index("tools", i);
                if (!t.isObject()) {
                    throw r.type(path, "an object");
                }
                Turn.ToolDef def = reader.read(t, path);
                if (def != null) {
                    defs.add(def);
                }
            }
        }
        return defs;
    }

    /** The OpenAI styles' {@code tool_choice} as a string: none, auto or required. */
    static Mode of(RequestReader r, String value) {
        return switch (value) {
            case "none" -> Mode.NONE;
            case "auto" -> Mode.AUTO;
            case "required" -> Mode.REQUIRED;
            default -> throw r.value("tool_choice", "'" + value + "' is not one of none, auto, required");
        };
    }

    /** The tools the turn calls, of the {@code candidates} the choice left. */
    static List<Turn.ToolDef> calls(List<Turn.ToolDef> candidates, Mode mode, boolean parallel,
            boolean afterToolResult) {
        if (candidates.isEmpty() || mode == Mode.NONE || (mode == Mode.AUTO && afterToolResult)) {
            return List.of();
        }
        if (mode != Mode.NAMED && parallel && candidates.size() >= 2) {
            return List.copyOf(candidates.subList(0, 2));
        }
        return List.of(candidates.get(0));
    }
}
