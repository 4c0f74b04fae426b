package bookinfo.reviews;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class HttpMetricsTest {

    private static final String L = "method=\"GET\",route=\"/reviews/:id\",status=\"200\"";

    @Test
    void bucketsAreTheCatalogueBoundsAndInclusive() {
        assertEquals(List.of("0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1",
                "2.5", "5", "10"), Arrays.asList(HttpMetrics.LE));
        HttpMetrics m = new HttpMetrics();
        m.observe("GET", "/reviews/:id", 200, 500_000);      // exactly 0.5 ms: in le=0.0005
        m.observe("GET", "/reviews/:id", 200, 500_001);      // just above: first in le=0.001
        m.observe("GET", "/reviews/:id", 200, 3_000_000);    // 3 ms
        m.observe("GET", "/reviews/:id", 200, 11_000_000_000L); // 11 s: only +Inf
        String text = m.render();
        assertTrue(text.contains("http_request_duration_seconds_bucket{" + L + ",le=\"0.0005\"} 1\n"), text);
        assertTrue(text.contains("http_request_duration_seconds_bucket{" + L + ",le=\"0.001\"} 2\n"), text);
        assertTrue(text.contains("http_request_duration_seconds_bucket{" + L + ",le=\"0.0025\"} 2\n"), text);
        assertTrue(text.contains("http_request_duration_seconds_bucket{" + L + ",le=\"0.005\"} 3\n"), text);
        assertTrue(text.contains("http_request_duration_seconds_bucket{" + L + ",le=\"10\"} 3\n"), text);
        assertTrue(text.contains("http_request_duration_seconds_bucket{" + L + ",le=\"+Inf\"} 4\n"), text);
        assertTrue(text.contains("http_request_duration_seconds_count{" + L + "} 4\n"), text);
        assertTrue(text.contains("http_request_duration_seconds_sum{" + L + "} 11.004000001\n"), text);
        assertTrue(text.contains("http_requests_total{" + L + "} 4\n"), text);
    }

    @Test
    void seriesAreSeparatedByMethodRouteAndStatusWithTypeLines() {
        HttpMetrics m = new HttpMetrics();
        m.observe("GET", "/health", 200, 1);
        m.observe("GET", "/health", 200, 1);
        m.observe("POST", "/health", 405, 1);
        m.observe("GET", "unmatched", 404, 1);
        String text = m.render();
        assertTrue(text.startsWith("# HELP http_requests_total "), text);
        assertTrue(text.contains("# TYPE http_requests_total counter\n"), text);
        assertTrue(text.contains("# TYPE http_request_duration_seconds histogram\n"), text);
        assertTrue(text.contains("http_requests_total{method=\"GET\",route=\"/health\",status=\"200\"} 2\n"), text);
        assertTrue(text.contains("http_requests_total{method=\"POST\",route=\"/health\",status=\"405\"} 1\n"), text);
        assertTrue(text.contains("http_requests_total{method=\"GET\",route=\"unmatched\",status=\"404\"} 1\n"), text);
        assertEquals(3, text.lines().filter(l -> l.startsWith("http_requests_total{")).count());
        assertEquals(3 * 15, text.lines().filter(l -> l.startsWith("http_request_duration_seconds_bucket{")).count());
    }
}
