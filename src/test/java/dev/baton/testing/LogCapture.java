package dev.baton.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/** Every line the service logs while capturing, formatted with its message and stack trace. */
public final class LogCapture extends Handler {

    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final SimpleFormatter formatter = new SimpleFormatter();

    private LogCapture() {
        setLevel(Level.ALL);
    }

    public static LogCapture start() {
        LogCapture capture = new LogCapture();
        Logger.getLogger("").addHandler(capture);
        return capture;
    }

    public void stop() {
        Logger.getLogger("").removeHandler(this);
    }

    public List<String> lines() {
        return lines;
    }

    @Override
    public void publish(LogRecord record) {
        lines.add(formatter.format(record));
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
    }
}
