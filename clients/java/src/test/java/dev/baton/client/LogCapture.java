package dev.baton.client;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** Records what the client logs ({@code System.Logger} "dev.baton.client", backed by java.util.logging) while open. */
final class LogCapture extends Handler implements AutoCloseable {
    private static final Logger JUL = Logger.getLogger("dev.baton.client");
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();

    LogCapture() {
        JUL.addHandler(this);
    }

    @Override
    public void publish(LogRecord r) {
        records.add(r);
    }

    /** The warnings (and worse) that contain {@code part}. */
    List<String> warnings(String part) {
        return records.stream().filter(r -> r.getLevel().intValue() >= Level.WARNING.intValue())
                .map(LogRecord::getMessage).filter(m -> m.contains(part)).toList();
    }

    /** Every message, for failure messages. */
    List<String> all() {
        return records.stream().map(r -> r.getLevel() + " " + r.getMessage()).toList();
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        JUL.removeHandler(this);
    }
}
