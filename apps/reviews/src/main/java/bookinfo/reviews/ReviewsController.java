package bookinfo.reviews;

import jakarta.servlet.http.HttpServletRequest;
import java.util.ArrayList;
import java.util.List;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.web.HttpRequestMethodNotSupportedException;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/** GET /reviews/{id} and GET /health (docs/contract.md, reviews). */
@RestController
class ReviewsController {

    static final String[][] REVIEWS = {
        {
            "Reviewer1",
            "An extremely entertaining play by Shakespeare. The slapstick humour is refreshing!"
        },
        {
            "Reviewer2",
            "Absolutely fun and entertaining. The play lacks thematic depth when compared to other plays by Shakespeare."
        },
    };

    private static final Health HEALTHY = new Health("Reviews is healthy");

    private final RatingsClient ratings;
    private final ReviewsConfig config;

    ReviewsController(RatingsClient ratings, ReviewsConfig config) {
        this.ratings = ratings;
        this.config = config;
    }

    @GetMapping(Routes.REVIEWS)
    ProductReviews reviews(
            @PathVariable("id") String productId,
            @RequestHeader HttpHeaders headers,
            HttpServletRequest request) {
        // A Java int (decimal, optional sign), as upstream; Spring's conversion takes "0x10".
        int id;
        try {
            id = Integer.parseInt(productId);
        } catch (NumberFormatException e) {
            throw new ResponseStatusException(HttpStatus.NOT_FOUND, null, e);
        }
        Ratings found =
                config.enableRatings()
                        ? ratings.fetch(id, headers, ServerTiming.calls(request))
                        : null;
        List<ProductReviews.Review> reviews = new ArrayList<>(REVIEWS.length);
        for (String[] review : REVIEWS) {
            reviews.add(
                    new ProductReviews.Review(
                            review[0], review[1], found == null ? null : found.rating(review[0])));
        }
        return new ProductReviews(
                Integer.toString(id), config.podName(), config.clusterName(), reviews);
    }

    @GetMapping(Routes.HEALTH)
    Health health() {
        return HEALTHY;
    }

    /**
     * Spring MVC answers OPTIONS by itself (200 with Allow) unless a mapping declares it; the
     * contract wants 405 like any other method that is not GET or HEAD.
     */
    @RequestMapping(
            path = {Routes.HEALTH, Routes.REVIEWS},
            method = RequestMethod.OPTIONS)
    void options() throws HttpRequestMethodNotSupportedException {
        throw new HttpRequestMethodNotSupportedException("OPTIONS", List.of("GET", "HEAD"));
    }
}
