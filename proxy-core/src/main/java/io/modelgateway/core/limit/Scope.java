package io.modelgateway.core.limit;

/**
 * The names a scope's usage is filed under. Names, not config objects, so that a reload (which builds new
 * {@code KeyConfig} and {@code ModelConfig} objects) finds the usage of the old ones. A key-on-model scope is
 * filed under the model's own name even when the key's limit came from a glob: every matching model gets a
 * budget of its own, as {@code KeyConfig#limitsFor} reads.
 *
 * @param keyName   empty for a model scope
 * @param modelName empty for a key scope
 */
record Scope(Kind kind, String keyName, String modelName) {
    enum Kind {
        KEY, KEY_ON_MODEL, MODEL
    }

    static Scope key(String keyName) {
        return new Scope(Kind.KEY, keyName, "");
    }

    static Scope keyOnModel(String keyName, String modelName) {
        return new Scope(Kind.KEY_ON_MODEL, keyName, modelName);
    }

    static Scope model(String modelName) {
        return new Scope(Kind.MODEL, "", modelName);
    }

    /** For 429 messages: names only, never a key's value. */
    String describe() {
        return switch (kind) {
            case KEY -> "key `" + keyName + "`";
            case KEY_ON_MODEL -> "key `" + keyName + "` for model `" + modelName + "`";
            case MODEL -> "model `" + modelName + "`";
        };
    }
}
