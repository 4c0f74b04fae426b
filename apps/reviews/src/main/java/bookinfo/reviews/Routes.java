package bookinfo.reviews;

import jakarta.servlet.http.HttpServletRequest;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.util.ServletRequestPathUtils;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/** The route patterns this service serves, and their metrics labels ("/reviews/:id"). */
final class Routes {

    static final String HEALTH = "/health";
    static final String METRICS = "/metrics";
    static final String REVIEWS = "/reviews/{id}";

    /** The label for 404s, so random paths cannot blow up label cardinality. */
    static final String UNMATCHED = "unmatched";

    private static final List<PathPattern> SERVED =
            List.of(
                    PathPatternParser.defaultInstance.parse(HEALTH),
                    PathPatternParser.defaultInstance.parse(METRICS),
                    PathPatternParser.defaultInstance.parse(REVIEWS));

    /** Label by served pattern: {name} written :name. */
    private static final Map<String, String> LABELS =
            SERVED.stream()
                    .map(PathPattern::getPatternString)
                    .collect(
                            Collectors.toUnmodifiableMap(
                                    p -> p, p -> p.replaceAll("\\{([^}/]+)}", ":$1")));

    private Routes() {}

    /**
     * The route label: Spring MVC's best-matching pattern with {name} written :name. A request that
     * Spring rejected before choosing a handler (405 for a method no mapping serves) carries no
     * pattern; its label is the served pattern its path matches. 404s are "unmatched".
     */
    static String label(HttpServletRequest request, int status) {
        if (status == 404) {
            return UNMATCHED;
        }
        Object best = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
        String label = best == null ? null : LABELS.get(best.toString());
        if (label == null) {
            String served = servedPatternFor(request);
            label = served == null ? UNMATCHED : LABELS.get(served);
        }
        return label;
    }

    private static String servedPatternFor(HttpServletRequest request) {
        var path =
                ServletRequestPathUtils.hasParsedRequestPath(request)
                        ? ServletRequestPathUtils.getParsedRequestPath(request)
                                .pathWithinApplication()
                        : ServletRequestPathUtils.parseAndCache(request).pathWithinApplication();
        for (PathPattern pattern : SERVED) {
            if (pattern.matches(path)) {
                return pattern.getPatternString();
            }
        }
        return null;
    }
}
