package bookinfo.reviews;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.context.ConfigurableApplicationContext;
import sun.misc.Signal;

/**
 * SIGTERM/SIGINT: stop accepting and close idle keep-alive connections at once, then close the
 * context (Spring's graceful shutdown waits for in-flight requests, whose responses carry
 * "Connection: close", then stops Tomcat) and exit 0. A watchdog exits anyway once
 * SHUTDOWN_TIMEOUT_SECONDS have passed, so the process never outlives its grace period.
 */
final class SignalShutdown {

    private SignalShutdown() {
    }

    static void install(AtomicReference<ConfigurableApplicationContext> running, Duration timeout) {
        AtomicBoolean draining = new AtomicBoolean();
        sun.misc.SignalHandler handler = signal -> {
            if (!draining.compareAndSet(false, true)) {
                return;
            }
            System.err.println(ReviewsConfig.SERVICE + ": SIG" + signal.getName() + " received, draining for up to "
                    + timeout.toSeconds() + " s");
            Thread watchdog = new Thread(() -> {
                try {
                    Thread.sleep(timeout.toMillis());
                } catch (InterruptedException e) {
                    return;
                }
                System.err.println(ReviewsConfig.SERVICE + ": shutdown timeout reached, exiting");
                // Non-zero: requests were cut off (docs/configuration.md).
                Runtime.getRuntime().halt(1);
            }, "shutdown-watchdog");
            watchdog.setDaemon(true);
            watchdog.start();
            ConfigurableApplicationContext context = running.get();
            if (context != null) {
                TomcatDrain.begin(context);
                context.close();
            }
            System.exit(0);
        };
        Signal.handle(new Signal("TERM"), handler);
        Signal.handle(new Signal("INT"), handler);
    }
}
