package bookinfo.reviews;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * http_requests_total and http_request_duration_seconds by method, route and status, exactly as
 * docs/configuration.md names them. Hand-rolled so the hot path is one map lookup and a few
 * LongAdder increments, and so names and bucket labels do not depend on a metrics library's style.
 */
final class HttpMetrics {

    static final double[] BOUNDS = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
    static final String[] LE = {"0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5",
        "1", "2.5", "5", "10"};

    private static final long[] BOUNDS_NANOS = new long[BOUNDS.length];

    static {
        for (int i = 0; i < BOUNDS.length; i++) {
            BOUNDS_NANOS[i] = Math.round(BOUNDS[i] * 1e9);
        }
    }

    private record Key(String method, String route, int status) {
    }

    private static final class Series {
        /** Per-bucket (not cumulative) counts; the last slot is above the largest bound. */
        final LongAdder[] buckets = new LongAdder[BOUNDS.length + 1];
        final LongAdder sumNanos = new LongAdder();

        Series() {
            for (int i = 0; i < buckets.length; i++) {
                buckets[i] = new LongAdder();
            }
        }
    }

    private final Map<Key, Series> series = new ConcurrentHashMap<>();

    void observe(String method, String route, int status, long nanos) {
        Series s = series.computeIfAbsent(new Key(method, route, status), k -> new Series());
        int bucket = 0;
        while (bucket < BOUNDS_NANOS.length && nanos > BOUNDS_NANOS[bucket]) {
            bucket++;
        }
        s.buckets[bucket].increment();
        s.sumNanos.add(nanos);
    }

    /** Prometheus text exposition format 0.0.4. */
    String render() {
        List<Map.Entry<Key, Series>> rows = new ArrayList<>(series.entrySet());
        rows.sort(Comparator.comparing((Map.Entry<Key, Series> e) -> e.getKey().route())
                .thenComparing(e -> e.getKey().method())
                .thenComparingInt(e -> e.getKey().status()));
        StringBuilder out = new StringBuilder(256 + rows.size() * 2048);
        long[][] counts = new long[rows.size()][];
        for (int r = 0; r < rows.size(); r++) {
            // One snapshot per series, so bucket, count and total agree within a scrape.
            LongAdder[] buckets = rows.get(r).getValue().buckets;
            counts[r] = new long[buckets.length];
            for (int i = 0; i < buckets.length; i++) {
                counts[r][i] = buckets[i].sum();
            }
        }
        out.append("# HELP http_requests_total Total number of HTTP requests.\n");
        out.append("# TYPE http_requests_total counter\n");
        for (int r = 0; r < rows.size(); r++) {
            out.append("http_requests_total{").append(labels(rows.get(r).getKey())).append("} ")
                    .append(total(counts[r])).append('\n');
        }
        out.append("# HELP http_request_duration_seconds HTTP request duration in seconds.\n");
        out.append("# TYPE http_request_duration_seconds histogram\n");
        for (int r = 0; r < rows.size(); r++) {
            String labels = labels(rows.get(r).getKey());
            long cumulative = 0;
            for (int i = 0; i < LE.length; i++) {
                cumulative += counts[r][i];
                out.append("http_request_duration_seconds_bucket{").append(labels).append(",le=\"").append(LE[i])
                        .append("\"} ").append(cumulative).append('\n');
            }
            long total = total(counts[r]);
            out.append("http_request_duration_seconds_bucket{").append(labels).append(",le=\"+Inf\"} ")
                    .append(total).append('\n');
            double seconds = rows.get(r).getValue().sumNanos.sum() / 1e9;
            out.append("http_request_duration_seconds_sum{").append(labels).append("} ")
                    .append(String.format(Locale.ROOT, "%.9f", seconds)).append('\n');
            out.append("http_request_duration_seconds_count{").append(labels).append("} ").append(total).append('\n');
        }
        return out.toString();
    }

    private static long total(long[] counts) {
        long total = 0;
        for (long c : counts) {
            total += c;
        }
        return total;
    }

    /** Methods and routes are normalised by the caller, so no label value needs escaping. */
    private static String labels(Key key) {
        return "method=\"" + key.method() + "\",route=\"" + key.route() + "\",status=\"" + key.status() + "\"";
    }
}
