package bookinfo.reviews.serving;

import org.springframework.boot.web.context.WebServerGracefulShutdownLifecycle;
import org.springframework.context.SmartLifecycle;

/**
 * Whether the drain cut requests off. Its phase stops it after Spring Boot's graceful shutdown and
 * before Jetty stops: requests Jetty's stop fails leave the in-flight count as they unwind, so a
 * count taken later would say 0.
 */
final class DrainVerdict implements SmartLifecycle {

    private final RequestObserver requests;
    private volatile boolean running;
    private volatile int leftWhenDrained = -1;

    DrainVerdict(RequestObserver requests) {
        this.requests = requests;
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
        return WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE - 512;
    }
}
