package bookinfo.reviews;

import org.springframework.boot.web.context.WebServerGracefulShutdownLifecycle;
import org.springframework.context.SmartLifecycle;

/**
 * Whether the drain ended with requests still in flight. Its lifecycle phase stops it after Spring
 * Boot's graceful shutdown (which waits up to SHUTDOWN_TIMEOUT_SECONDS) and before the web server
 * stops: Jetty's stop fails the requests still running, and they leave the in-flight count as they
 * unwind, so a count taken after the stop would say 0 for a drain that cut requests off.
 */
final class DrainVerdict implements SmartLifecycle {

    static final int PHASE = WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE - 512;

    private final RequestObserver requests;
    private volatile boolean running;
    private volatile int leftWhenDrained = -1;

    DrainVerdict(RequestObserver requests) {
        this.requests = requests;
    }

    /** Requests still in flight when the drain ended; -1 before it ends. */
    int leftWhenDrained() {
        return leftWhenDrained;
    }

    /** True when the drain ended with requests in flight (the exit status is then 1). */
    boolean cutOff() {
        int left = leftWhenDrained;
        return left > 0 || (left < 0 && requests.inFlight() > 0);
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        leftWhenDrained = requests.inFlight();
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
