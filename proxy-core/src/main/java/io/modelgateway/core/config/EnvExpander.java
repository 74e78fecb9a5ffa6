package io.modelgateway.core.config;

import java.util.Map;

/**
 * Expands {@code ${VAR}} and {@code ${VAR:-default}} in a config string, any number of times, with
 * text around them. {@code $${} is a literal {@code ${}. One pass only: a value that itself contains
 * {@code ${} is kept as is, so the environment cannot inject further references.
 *
 * <p>Messages name variables, never values or defaults: either may be a secret.
 */
final class EnvExpander {

    /** {@code ${VAR}} named a variable that is unset or empty. */
    static final class UnsetVariableException extends Exception {
        private static final long serialVersionUID = 1L;
        final String variable;
        final boolean empty;

        UnsetVariableException(String variable, boolean empty) {
            super(variable, null, false, false);
            this.variable = variable;
            this.empty = empty;
        }

        String describe() {
            return "environment variable " + variable + (empty ? " is empty" : " is not set");
        }
    }

    private EnvExpander() {
    }

    /** Whether {@code s} holds at least one reference (an escaped {@code $${} does not count). */
    static boolean hasReference(String s) {
        for (int i = s.indexOf("${"); i >= 0; i = s.indexOf("${", i + 2)) {
            if (i == 0 || s.charAt(i - 1) != '$') {
                return true;
            }
        }
        return false;
    }

    /**
     * @throws UnsetVariableException   a {@code ${VAR}} without default is unset or empty
     * @throws IllegalArgumentException the reference syntax is broken
     */
    static String expand(String s, Map<String, String> env) throws UnsetVariableException {
        if (s.indexOf('$') < 0) {
            return s;
        }
        StringBuilder out = new StringBuilder(s.length() + 32);
        int i = 0;
        while (i < s.length()) {
            if (s.startsWith("$${", i)) {
                out.append("${");
                i += 3;
            } else if (s.startsWith("${", i)) {
                int end = s.indexOf('}', i + 2);
                if (end < 0) {
                    throw new IllegalArgumentException("'${' without a closing '}'");
                }
                String body = s.substring(i + 2, end);
                int sep = body.indexOf(":-");
                String name = sep < 0 ? body : body.substring(0, sep);
                if (!isName(name)) {
                    throw new IllegalArgumentException("an environment reference needs a variable name"
                            + " of letters, digits and '_', as in ${NAME} or ${NAME:-default}");
                }
                String value = env.get(name);
                boolean missing = value == null || value.isEmpty();
                if (sep < 0) {
                    if (missing) {
                        throw new UnsetVariableException(name, value != null);
                    }
                    out.append(value);
                } else {
                    String fallback = body.substring(sep + 2);
                    if (fallback.contains("${")) {
                        throw new IllegalArgumentException("nested environment references are not supported");
                    }
                    out.append(missing ? fallback : value);
                }
                i = end + 1;
            } else {
                out.append(s.charAt(i++));
            }
        }
        return out.toString();
    }

    private static boolean isName(String name) {
        if (name.isEmpty() || Character.isDigit(name.charAt(0))) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
                return false;
            }
        }
        return true;
    }
}
