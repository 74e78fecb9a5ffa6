/**
 * Translation between the API styles, for a caller whose model is served by a provider of another style.
 *
 * <p><b>Naming.</b> The styles are named by their endpoints: <i>Chat</i> is the OpenAI style
 * ({@code chat/completions}), <i>Messages</i> the Anthropic style ({@code messages}), <i>Responses</i> the OpenAI
 * Responses API ({@code responses}, contract 12). A translator is named by
 * the direction its data flows, source first: {@code <source style><what>To<target style>}, where what is
 * {@code Request}, {@code Response} (a complete answer) or {@code Stream} (an SSE stream, event by event).
 * So a chat caller served by an Anthropic-style upstream goes through {@link ChatRequestToMessages} on the way
 * up and {@link MessagesResponseToChat} / {@link MessagesStreamToChat} on the way back; a messages caller served
 * by an OpenAI-style upstream through {@link MessagesRequestToChat}, then {@link ChatResponseToMessages} /
 * {@link ChatStreamToMessages}. A Responses caller served by a chat-completions upstream goes through
 * {@link ResponsesRequestToChat}, then {@link ChatResponseToResponses} / {@link ChatStreamToResponses}; served by an
 * Anthropic upstream through {@link ResponsesRequestToMessages} (which reads the request as the chat request it
 * means and hands it to {@link ChatRequestToMessages}), then {@link MessagesResponseToResponses} /
 * {@link MessagesStreamToResponses}; both Responses answer directions write through {@link ResponsesOutput} and
 * {@link ResponsesEvents}, and every style's usage object is read and written by {@link UsageJson}. What a request
 * translator is configured with is {@code <translator>Options}.
 * Helpers of one direction are named for what they are ({@link MessagesStreamEvent}: one messages-style stream
 * event as read; {@link ChatToolNames}: tool names as the chat upstream knows them; {@link SseData}: the joined {@code data:} lines of one
 * SSE event, as every stream reader takes them). The caller's side of a translated stream is one writer per style,
 * shared by the translators into it: {@link ChatChunks}, {@link MessagesEvents}, {@link ResponsesEvents}; a Gemini
 * stream is read for either caller through {@link GeminiStream}. {@link ErrorTranslator}
 * reads an error body of either style and is used by both directions; {@link EmbeddingsBase64} rewrites an
 * embeddings answer within the OpenAI style.
 */
package io.modelgateway.codecs.translate;
