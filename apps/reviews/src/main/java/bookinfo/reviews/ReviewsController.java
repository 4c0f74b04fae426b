package bookinfo.reviews;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Map;
import org.springframework.web.HttpRequestHandler;
import org.springframework.web.servlet.HandlerMapping;

/**
 * GET /reviews/<id>, the hot route, as a plain Spring MVC HttpRequestHandler that ReviewsRoute maps
 * ahead of the annotated controllers. It writes its bytes straight to the servlet response; the
 * bytes and headers on the wire are the same as JsonResponses.json's.
 *
 * Served as an annotated @GetMapping method it went through the whole annotation pipeline for every
 * request: matching against every @RequestMapping, argument resolvers, model and binder factories,
 * a reflective call, then return-value handlers, content negotiation against a Content-Type that is
 * fixed anyway, body advice and a message converter: about a third of the JFR CPU samples of a
 * request.
 *
 * An exception escaping here (none is expected: every ratings failure is a rating) is not seen by
 * ErrorResponses, which only advises annotated handlers; Tomcat turns it into a 500 that
 * JsonErrorController renders as the same {"error":"internal server error"}.
 */
final class ReviewsController implements HttpRequestHandler {

    private final ReviewsBody body;
    private final RatingsClient ratings;
    private final DrainingResponses draining;
    private final boolean ratingsEnabled;

    ReviewsController(ReviewsBody body, RatingsClient ratings, DrainingResponses draining, ReviewsConfig config) {
        this.body = body;
        this.ratings = ratings;
        this.draining = draining;
        this.ratingsEnabled = config.enableRatings();
    }

    @Override
    public void handleRequest(HttpServletRequest request, HttpServletResponse response) throws IOException {
        @SuppressWarnings("unchecked")
        Map<String, String> variables =
                (Map<String, String>) request.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE);
        // Parsed here rather than converted by Spring, which uses Integer.decode ("0x10", "010").
        int productId;
        try {
            productId = Integer.parseInt(variables.get(ReviewsRoute.ID));
        } catch (NumberFormatException e) {
            JsonResponses.write(response, HttpServletResponse.SC_NOT_FOUND, JsonResponses.NOT_FOUND, draining);
            return;
        }
        String productKey = Integer.toString(productId);
        Ratings found = ratingsEnabled ? ratings.fetch(productKey, request) : null;
        JsonResponses.write(response, HttpServletResponse.SC_OK, body.render(productKey, found), draining);
    }
}
