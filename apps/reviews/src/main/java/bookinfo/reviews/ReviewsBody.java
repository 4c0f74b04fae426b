package bookinfo.reviews;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;

/** The /reviews/<id> body, field order and types as upstream (CONTRACT.md: "id" is a string). */
final class ReviewsBody {

    static final String UNAVAILABLE = "Ratings service is currently unavailable";

    private static final String[][] REVIEWS = {
        {"Reviewer1", "An extremely entertaining play by Shakespeare. The slapstick humour is refreshing!"},
        {"Reviewer2", "Absolutely fun and entertaining. The play lacks thematic depth when compared to other plays by Shakespeare."},
    };

    @JsonPropertyOrder({"id", "podname", "clustername", "reviews"})
    record Body(String id, String podname, String clustername, List<Review> reviews) {
    }

    @JsonPropertyOrder({"reviewer", "text", "rating"})
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Review(String reviewer, String text, Rating rating) {
    }

    @JsonPropertyOrder({"stars", "color", "error"})
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Rating(Integer stars, String color, String error) {
    }

    private final ObjectMapper json;
    private final String podName;
    private final String clusterName;
    private final String starColor;

    ReviewsBody(ObjectMapper json, ReviewsConfig config) {
        this.json = json;
        this.podName = config.podName();
        this.clusterName = config.clusterName();
        this.starColor = config.starColor();
    }

    /** ratings null means v1: no "rating" keys at all. */
    byte[] render(String id, Ratings ratings) throws JsonProcessingException {
        Review[] reviews = new Review[REVIEWS.length];
        for (int i = 0; i < REVIEWS.length; i++) {
            reviews[i] = new Review(REVIEWS[i][0], REVIEWS[i][1], rating(ratings, REVIEWS[i][0]));
        }
        return json.writeValueAsBytes(new Body(id, podName, clusterName, List.of(reviews)));
    }

    private Rating rating(Ratings ratings, String reviewer) {
        if (ratings == null) {
            return null;
        }
        Integer stars = ratings.stars(reviewer);
        return stars == null ? new Rating(null, null, UNAVAILABLE) : new Rating(stars, starColor, null);
    }
}
