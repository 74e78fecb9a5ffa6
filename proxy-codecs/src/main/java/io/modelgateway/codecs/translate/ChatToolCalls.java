package io.modelgateway.codecs.translate;

import io.modelgateway.codecs.translate.ChatStreamToMessages.ToolFragment;
import java.util.HashSet;
import java.util.Set;

/**
 * Which call each {@code tool_calls[]} fragment of a chat stream belongs to, for the two translators that turn the
 * calls into blocks or items opened one at a time ({@link ChatStreamToMessages}, {@link ChatStreamToResponses}). A
 * fragment names its call by index; some compatible servers omit the index, and then the same id (or none) continues
 * the open call and anything else starts the first index not used yet. The caller's side cannot reopen a call whose
 * block or item it closed, so content for such a call is a violation the stream fails on. One per stream, confined to
 * its event loop.
 */
final class ChatToolCalls {
    /** What one fragment does. */
    enum Step {
        /** It continues the open call. */
        CONTINUE,
        /** It starts a new call, now the open one. */
        START,
        /** It names a closed call but carries nothing: it is dropped. */
        SKIP,
        /** It carries content for a closed call. */
        AGAIN
    }

    private final Set<Long> seen = new HashSet<>();
    /** Index and id of the call started last; it is open while the caller's side says so. */
    private long open = -1;
    private String openId;
    private long index;

    /** What {@code f} does; {@code callOpen}: the block or item of the call started last is still open. */
    Step next(ToolFragment f, boolean callOpen) {
        long k;
        if (f.hasIndex) {
            k = f.index;
        } else if (callOpen && (f.id == null || f.id.equals(openId))) {
            k = open;
        } else {
            k = seen.size();
            while (seen.contains(k)) {
                k++;
            }
        }
        index = k;
        if (callOpen && k == open) {
            return Step.CONTINUE;
        }
        if (seen.contains(k)) {
            return f.arguments != null && !f.arguments.isEmpty() ? Step.AGAIN : Step.SKIP;
        }
        open = k;
        openId = f.id;
        seen.add(k);
        return Step.START;
    }

    /** The chat index of the fragment last read. */
    long index() {
        return index;
    }
}
