package bookinfo.reviews;

import jakarta.servlet.http.HttpServletRequest;
import org.springframework.core.Ordered;
import org.springframework.web.servlet.handler.AbstractHandlerMapping;
import org.springframework.web.util.ServletRequestPathUtils;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * Maps GET and HEAD of /reviews/{id} to ReviewsController, first among the handler mappings. The
 * path is matched exactly as a @GetMapping("/reviews/{id}") was: the same PathPattern (default
 * parser: no trailing slash, one segment, decoded, path parameters ignored) against the same parsed
 * request path, and the same request attributes are exposed (matched pattern, which the metrics
 * label reads; URI variables). Every other method falls through to the annotated controllers, where
 * MethodNotAllowedController answers 405 for this route as before.
 */
final class ReviewsRoute extends AbstractHandlerMapping {

    static final String ID = "id";

    private static final PathPattern PATTERN = PathPatternParser.defaultInstance.parse(Routes.REVIEWS);

    private final ReviewsController handler;

    ReviewsRoute(ReviewsController handler) {
        this.handler = handler;
        setOrder(Ordered.HIGHEST_PRECEDENCE);
    }

    @Override
    protected Object getHandlerInternal(HttpServletRequest request) {
        String method = request.getMethod();
        if (!method.equals("GET") && !method.equals("HEAD")) {
            return null;
        }
        PathPattern.PathMatchInfo match =
                PATTERN.matchAndExtract(ServletRequestPathUtils.getParsedRequestPath(request).pathWithinApplication());
        if (match == null) {
            return null;
        }
        request.setAttribute(BEST_MATCHING_PATTERN_ATTRIBUTE, Routes.REVIEWS);
        request.setAttribute(URI_TEMPLATE_VARIABLES_ATTRIBUTE, match.getUriVariables());
        return handler;
    }
}
