package io.modelgateway.core.config;

/** What a model answers: chat (chat completions and messages) or embeddings. */
public enum ModelType {
    CHAT,
    EMBEDDING
}
