package io.modelgateway.codecs.translate;

/** Contract 8.7: Anthropic {@code stop_reason} ⇄ chat {@code finish_reason}. */
public final class StopReasons {
    private StopReasons() {
    }

    /**
     * Anthropic → chat. {@code onlyJsonResponseTool}: the turn's only tool call was the GD-14
     * {@code json_response} emulation, which is reported as a plain answer.
     */
    public static String toFinishReason(String stopReason, boolean onlyJsonResponseTool) {
        if (stopReason == null) {
            return "stop";
        }
        return switch (stopReason) {
            case "max_tokens", "model_context_window_exceeded" -> "length";
            case "tool_use" -> onlyJsonResponseTool ? "stop" : "tool_calls";
            case "refusal" -> "content_filter";
            default -> "stop"; // end_turn, stop_sequence, pause_turn, unknown
        };
    }

    /** Chat → Anthropic; {@code error} (OpenRouter) is not a stop reason and must be handled by the caller. */
    public static String toStopReason(String finishReason) {
        if (finishReason == null) {
            return "end_turn";
        }
        return switch (finishReason) {
            case "length" -> "max_tokens";
            case "tool_calls", "function_call" -> "tool_use";
            case "content_filter" -> "refusal";
            default -> "end_turn";
        };
    }
}
