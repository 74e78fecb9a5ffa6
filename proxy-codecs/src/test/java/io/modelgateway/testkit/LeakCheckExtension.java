package io.modelgateway.testkit;

import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Registered for every test class by auto-detection: after the class has run, forces the leak
 * detector to look and fails the class if any buffer leaked.
 */
public final class LeakCheckExtension implements AfterAllCallback {
    @Override
    public void afterAll(ExtensionContext context) {
        LeakRecorder.install();
        List<String> leaks = LeakRecorder.collect();
        if (!leaks.isEmpty()) {
            throw new AssertionError(leaks.size() + " ByteBuf leak(s) reported while running "
                    + context.getDisplayName() + ":\n" + String.join("\n\n", leaks));
        }
    }
}
