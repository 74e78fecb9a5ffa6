package io.modelgateway.core.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * What a logger (and every logger below it) logs while this is open, at every level: for a test that looks for a
 * warning, or checks that no secret is ever logged. Closing restores the logger's level.
 */
public final class LogLines extends Handler implements AutoCloseable {
    /** Each record's message as logged. */
    public final List<String> messages = new CopyOnWriteArrayList<>();
    /** Each record formatted whole (time, logger, level, message with its parameters, any exception's trace). */
    public final List<String> formatted = new CopyOnWriteArrayList<>();
    private final SimpleFormatter format = new SimpleFormatter();
    /** Held: the logging system keeps only weak references to its loggers, which would drop the level set here. */
    private final Logger logger;
    private final Level before;

    private LogLines(String name) {
        logger = Logger.getLogger(name);
        before = logger.getLevel();
        logger.setLevel(Level.ALL);
        logger.addHandler(this);
    }

    /** Starts capturing {@code name}'s records (e.g. {@code "io.modelgateway"} for the whole gateway). */
    public static LogLines of(String name) {
        return new LogLines(name);
    }

    @Override
    public void publish(LogRecord record) {
        messages.add(record.getMessage());
        formatted.add(format.format(record));
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        logger.removeHandler(this);
        logger.setLevel(before);
    }
}
