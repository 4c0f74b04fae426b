package bookinfo.reviews;

import jakarta.servlet.http.HttpServletRequest;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.springframework.http.server.RequestPath;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/** The route patterns this service serves, and their metrics labels ("/reviews/:id"). */
public final class Routes {

    static final String HEALTH = "/health";
    static final String METRICS = "/metrics";
    static final String REVIEWS = "/reviews/{id}";

    /** The label for 404s, so random paths cannot blow up label cardinality. */
    static final String UNMATCHED = "unmatched";

    /** Each served pattern (they never overlap) and its label, {name} written :name. */
    private static final Map<PathPattern, String> LABELS =
            Stream.of(HEALTH, METRICS, REVIEWS)
                    .collect(
                            Collectors.toUnmodifiableMap(
                                    PathPatternParser.defaultInstance::parse,
                                    p -> p.replaceAll("\\{([^}/]+)}", ":$1")));

    private Routes() {}

    /**
     * The label of the served pattern the path matches, also when Spring refused the request before
     * choosing a handler (a 405); "unmatched" for every 404.
     */
    public static String label(HttpServletRequest request, int status) {
        if (status != 404) {
            var path =
                    RequestPath.parse(request.getRequestURI(), request.getContextPath())
                            .pathWithinApplication();
            for (Map.Entry<PathPattern, String> served : LABELS.entrySet()) {
                if (served.getKey().matches(path)) {
                    return served.getValue();
                }
            }
        }
        return UNMATCHED;
    }
}
