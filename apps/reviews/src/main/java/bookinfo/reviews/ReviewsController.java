package bookinfo.reviews;

import com.fasterxml.jackson.core.JsonProcessingException;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

@RestController
class ReviewsController {

    private final ReviewsBody body;
    private final RatingsClient ratings;
    private final boolean ratingsEnabled;

    ReviewsController(ReviewsBody body, RatingsClient ratings, ReviewsConfig config) {
        this.body = body;
        this.ratings = ratings;
        this.ratingsEnabled = config.enableRatings();
    }

    @GetMapping(Routes.REVIEWS)
    ResponseEntity<byte[]> reviews(@PathVariable String id, HttpServletRequest request) throws JsonProcessingException {
        // Parsed here rather than bound as int: Spring's conversion uses Integer.decode ("0x10", "010").
        int productId;
        try {
            productId = Integer.parseInt(id);
        } catch (NumberFormatException e) {
            return JsonResponses.notFound();
        }
        String productKey = Integer.toString(productId);
        Ratings found = ratingsEnabled ? ratings.fetch(productKey, request) : null;
        return JsonResponses.json(HttpStatus.OK, body.render(productKey, found));
    }
}
