package bookinfo.reviews;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Set;
import java.util.function.LongSupplier;

/** Times every request once, feeds the metrics and, when ACCESS_LOG=true, the access log. */
final class RequestObserver extends HttpFilter {

    /** Anything else is labelled OTHER so arbitrary method tokens cannot blow up cardinality. */
    private static final Set<String> METHODS =
            Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT");

    private final HttpMetrics metrics;
    private final AccessLog accessLog;
    private final LongSupplier nanoTime;

    /** accessLog null when ACCESS_LOG=false, so the hot path does no formatting at all. */
    RequestObserver(HttpMetrics metrics, AccessLog accessLog, LongSupplier nanoTime) {
        this.metrics = metrics;
        this.accessLog = accessLog;
        this.nanoTime = nanoTime;
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        long start = nanoTime.getAsLong();
        boolean failed = true;
        try {
            chain.doFilter(request, response);
            failed = false;
        } finally {
            long nanos = nanoTime.getAsLong() - start;
            // An exception escaping Spring becomes a 500 from Tomcat, whatever status was set so far.
            int status = failed ? 500 : response.getStatus();
            String method = METHODS.contains(request.getMethod()) ? request.getMethod() : "OTHER";
            metrics.observe(method, Routes.label(request, status), status, nanos);
            if (accessLog != null) {
                accessLog.log(request.getMethod(), request.getRequestURI(), status, nanos);
            }
        }
    }
}
