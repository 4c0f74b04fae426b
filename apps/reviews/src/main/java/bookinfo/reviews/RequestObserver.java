package bookinfo.reviews;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * A servlet filter, first in the chain, that times every request once and records it in Micrometer
 * as the two families every bookinfo service exposes (docs/configuration.md): http_requests_total
 * (a Counter) and http_request_duration_seconds (a Timer whose histogram has exactly the
 * catalogue's buckets, as service-level objectives), tagged method, route, status. With
 * ACCESS_LOG=true it also writes the access log line.
 */
final class RequestObserver extends OncePerRequestFilter {

    static final String REQUESTS = "http.requests";
    static final String REQUESTS_HELP =
            "HTTP requests served, by method, route pattern and status.";
    static final String DURATION = "http.request.duration";
    static final String DURATION_HELP =
            "Time to serve an HTTP request, by method, route pattern and status.";

    static final Duration[] BUCKETS = {
        millis(0.5),
        millis(1),
        millis(2.5),
        millis(5),
        millis(10),
        millis(25),
        millis(50),
        millis(100),
        millis(250),
        millis(500),
        millis(1000),
        millis(2500),
        millis(5000),
        millis(10000)
    };

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

    /** accessLog null when ACCESS_LOG=false. */
    RequestObserver(MeterRegistry registry, AccessLog accessLog, LongSupplier nanoTime) {
        this.registry = registry;
        this.accessLog = accessLog;
        this.nanoTime = nanoTime;
    }

    /** Requests being served right now; a drain that ends with some left has cut them off. */
    int inFlight() {
        return inFlight.get();
    }

    @Override
    protected void doFilterInternal(
            HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        long start = nanoTime.getAsLong();
        inFlight.incrementAndGet();
        boolean failed = true;
        try {
            chain.doFilter(request, response);
            failed = false;
        } finally {
            inFlight.decrementAndGet();
            long nanos = nanoTime.getAsLong() - start;
            // An exception escaping Spring becomes a 500 from Jetty, whatever status was set so
            // far.
            int status = failed ? 500 : response.getStatus();
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

    private static Duration millis(double ms) {
        return Duration.ofNanos(Math.round(ms * 1_000_000));
    }
}
