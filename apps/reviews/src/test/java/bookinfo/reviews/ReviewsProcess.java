package bookinfo.reviews;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The service as a real child process (java + the test class path), for exit status and signals.
 */
public final class ReviewsProcess implements AutoCloseable {

    public final Process process;
    public final int port;
    public final List<String> stdout = new CopyOnWriteArrayList<>();
    public final List<String> stderr = new CopyOnWriteArrayList<>();
    private final Thread stdoutPump;
    private final Thread stderrPump;

    private ReviewsProcess(Process process, int port) {
        this.process = process;
        this.port = port;
        stdoutPump = pump(process.getInputStream(), stdout);
        stderrPump = pump(process.getErrorStream(), stderr);
    }

    /** Starts with a clean environment: only what the test gives, plus a free loopback port. */
    public static ReviewsProcess start(Map<String, String> env) throws IOException {
        int port = env.containsKey("PORT") ? Integer.parseInt(env.get("PORT")) : freePort();
        ProcessBuilder builder =
                new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-XX:TieredStopAtLevel=1",
                        "-Xshare:auto",
                        "-cp",
                        System.getProperty("java.class.path"),
                        ReviewsApplication.class.getName());
        builder.environment().clear();
        builder.environment().put("PORT", Integer.toString(port));
        builder.environment().put("LISTEN_ADDRESS", "127.0.0.1");
        builder.environment().putAll(env);
        return new ReviewsProcess(builder.start(), port);
    }

    /** Waits for the "listening on" log line. */
    public void awaitListening(long timeoutMillis) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (System.currentTimeMillis() < deadline) {
            if (stderr.stream().anyMatch(l -> l.contains("listening on http://"))) {
                return;
            }
            if (!process.isAlive()) {
                throw new AssertionError(
                        "reviews exited " + process.exitValue() + ": " + String.join("\n", stderr));
            }
            Thread.sleep(20);
        }
        throw new AssertionError("reviews did not start in time: " + String.join("\n", stderr));
    }

    /**
     * SIGTERM through the process handle: Process.destroy() would also close our ends of the
     * child's stdout and stderr, losing everything it prints while draining.
     */
    public void sigterm() {
        if (!process.toHandle().destroy()) {
            throw new AssertionError("could not signal reviews");
        }
    }

    /** Exit status, once the process has ended and all its output has been read. */
    public int awaitExit(long timeoutMillis) throws InterruptedException {
        if (!process.waitFor(timeoutMillis, TimeUnit.MILLISECONDS)) {
            throw new AssertionError("reviews still running after " + timeoutMillis + " ms");
        }
        stdoutPump.join(5000);
        stderrPump.join(5000);
        return process.exitValue();
    }

    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static Thread pump(java.io.InputStream in, List<String> lines) {
        Thread t =
                new Thread(
                        () -> {
                            try (BufferedReader r =
                                    new BufferedReader(
                                            new InputStreamReader(in, StandardCharsets.UTF_8))) {
                                for (String line = r.readLine();
                                        line != null;
                                        line = r.readLine()) {
                                    lines.add(line);
                                }
                            } catch (IOException e) {
                                // the process is gone
                            }
                        });
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }
}
