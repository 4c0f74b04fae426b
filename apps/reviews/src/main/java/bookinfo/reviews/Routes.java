package bookinfo.reviews;

import jakarta.servlet.http.HttpServletRequest;
import org.springframework.web.servlet.HandlerMapping;

/** The route patterns this service serves, shared by the controllers and the metrics labels. */
final class Routes {

    static final String HEALTH = "/health";
    static final String METRICS = "/metrics";
    static final String REVIEWS = "/reviews/{id}";

    /** The metrics label for 404s, so random paths cannot blow up label cardinality. */
    static final String UNMATCHED = "unmatched";

    private Routes() {
    }

    /** Route label in the style of docs/configuration.md: "/reviews/:id", or "unmatched". */
    static String label(HttpServletRequest request, int status) {
        if (status == 404) {
            return UNMATCHED;
        }
        Object pattern = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
        if (pattern == null) {
            return UNMATCHED;
        }
        return switch (pattern.toString()) {
            case HEALTH -> HEALTH;
            case METRICS -> METRICS;
            case REVIEWS -> "/reviews/:id";
            default -> UNMATCHED;
        };
    }
}
