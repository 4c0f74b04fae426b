package bookinfo.reviews;

import java.io.PrintStream;
import java.time.Clock;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/**
 * ACCESS_LOG=true: `<RFC3339 time> reviews <method> <path> <status> <duration ms, 3 decimals>` on
 * stdout.
 */
final class AccessLog {

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
