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

    /*
     * The last scope of each kind made, for the next request of the same key or model: its names are the very String
     * objects of the config in force, so an identity check finds it, and a request makes no scope. Shared by every
     * event loop without a lock: a scope is immutable (final fields, safely published), a stale or overwritten entry
     * only means a new scope, equal to it, is made.
     */
    private static Scope lastKey;
    private static Scope lastKeyOnModel;
    private static Scope lastModel;

    static Scope key(String keyName) {
        Scope s = lastKey;
        if (s == null || s.keyName != keyName) {
            s = new Scope(Kind.KEY, keyName, "");
            lastKey = s;
        }
        return s;
    }

    static Scope keyOnModel(String keyName, String modelName) {
        Scope s = lastKeyOnModel;
        if (s == null || s.keyName != keyName || s.modelName != modelName) {
            s = new Scope(Kind.KEY_ON_MODEL, keyName, modelName);
            lastKeyOnModel = s;
        }
        return s;
    }

    static Scope model(String modelName) {
        Scope s = lastModel;
        if (s == null || s.modelName != modelName) {
            s = new Scope(Kind.MODEL, "", modelName);
            lastModel = s;
        }
        return s;
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
