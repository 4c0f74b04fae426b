package bookinfo.reviews.serving;

import bookinfo.reviews.ReviewsConfig;
import bookinfo.reviews.Routes;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.stream.DoubleStream;
import org.eclipse.jetty.io.EofException;
import org.springframework.boot.web.context.WebServerGracefulShutdownLifecycle;
import org.springframework.context.SmartLifecycle;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * A servlet filter, first in the chain: the two metric families (DESIGN.md, "Metrics"), the access
 * log with ACCESS_LOG=true, and whether the drain cut requests off (its lifecycle phase; DESIGN.md,
 * "How each knob is implemented", SHUTDOWN_TIMEOUT_SECONDS).
 */
final class RequestObserver extends OncePerRequestFilter implements SmartLifecycle {

    static final String REQUESTS = "http.requests";
    static final String REQUESTS_HELP =
            "HTTP requests served, by method, route pattern and status.";
    static final String DURATION = "http.request.duration";
    static final String DURATION_HELP =
            "Time to serve an HTTP request, by method, route pattern and status.";

    /** The catalogue's buckets, in milliseconds. */
    static final Duration[] BUCKETS =
            DoubleStream.of(0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000)
                    .mapToObj(ms -> Duration.ofNanos(Math.round(ms * 1_000_000)))
                    .toArray(Duration[]::new);

    /**
     * The client left before its answer was written: nginx's "client closed request", as ratings.
     */
    static final int CLIENT_CLOSED = 499;

    /** Anything else is labelled OTHER, so arbitrary method tokens cannot blow up cardinality. */
    private static final Set<String> METHODS =
            Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT");

    private record Series(String method, String route, int status) {}

    private record Meters(Counter requests, Timer duration) {}

    private final MeterRegistry registry;
    private final AccessLog accessLog;
    private final LongSupplier nanoTime;
    private final Map<Series, Meters> meters = new ConcurrentHashMap<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile int leftWhenDrained = -1;

    /** accessLog null when ACCESS_LOG=false. */
    RequestObserver(MeterRegistry registry, AccessLog accessLog, LongSupplier nanoTime) {
        this.registry = registry;
        this.accessLog = accessLog;
        this.nanoTime = nanoTime;
    }

    /** True when the drain ended with requests in flight (the exit status is then 1). */
    boolean cutOff() {
        int left = leftWhenDrained;
        return left > 0 || (left < 0 && inFlight.get() > 0);
    }

    @Override
    public void start() {
        // Running from the start: isRunning() is true until stop().
    }

    @Override
    public void stop() {
        leftWhenDrained = inFlight.get();
    }

    @Override
    public boolean isRunning() {
        return leftWhenDrained < 0;
    }

    @Override
    public int getPhase() {
        return WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE - 512;
    }

    @Override
    protected void doFilterInternal(
            HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        long start = nanoTime.getAsLong();
        inFlight.incrementAndGet();
        // An exception escaping Spring becomes Jetty's 500, whatever status was set.
        int status = 500;
        try {
            chain.doFilter(request, response);
            status = response.getStatus();
        } catch (IOException e) {
            if (clientLeft(e)) {
                status = CLIENT_CLOSED;
            }
            throw e;
        } finally {
            inFlight.decrementAndGet();
            long nanos = nanoTime.getAsLong() - start;
            String method = METHODS.contains(request.getMethod()) ? request.getMethod() : "OTHER";
            Meters m =
                    meters.computeIfAbsent(
                            new Series(method, Routes.label(request, status), status),
                            this::register);
            m.requests().increment();
            m.duration().record(nanos, TimeUnit.NANOSECONDS);
            if (accessLog != null) {
                accessLog.log(request.getMethod(), request.getRequestURI(), status, nanos);
            }
        }
    }

    /** Jetty's EofException: writing to a connection its client has closed or reset. */
    private static boolean clientLeft(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof EofException) {
                return true;
            }
        }
        return false;
    }

    private Meters register(Series s) {
        String[] tags = {
            "method", s.method(), "route", s.route(), "status", Integer.toString(s.status())
        };
        return new Meters(
                Counter.builder(REQUESTS).description(REQUESTS_HELP).tags(tags).register(registry),
                Timer.builder(DURATION)
                        .description(DURATION_HELP)
                        .tags(tags)
                        .serviceLevelObjectives(BUCKETS)
                        .register(registry));
    }

    /** ACCESS_LOG=true: `<RFC3339 time> reviews <method> <path> <status> <ms, 3 decimals>`. */
    static final class AccessLog {

        private static final DateTimeFormatter RFC3339 =
                DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", Locale.ROOT)
                        .withZone(ZoneOffset.UTC);

        private final Clock clock;
        private final PrintStream out;

        AccessLog(Clock clock, PrintStream out) {
            this.clock = clock;
            this.out = out;
        }

        String line(String method, String path, int status, long nanos) {
            return String.format(
                    Locale.ROOT,
                    "%s %s %s %s %d %.3f",
                    RFC3339.format(clock.instant()),
                    ReviewsConfig.SERVICE,
                    method,
                    path,
                    status,
                    nanos / 1e6);
        }

        void log(String method, String path, int status, long nanos) {
            out.println(line(method, path, status, nanos));
        }
    }
}
