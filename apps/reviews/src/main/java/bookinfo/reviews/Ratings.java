package bookinfo.reviews;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.HashMap;
import java.util.Map;

/**
 * Stars by reviewer for one product. A reviewer ratings did not list gets the "unavailable" rating
 * (upstream keeps -1 for it and prints the error); a value that is not a number counts as not
 * listed; a fractional number is truncated like upstream's JsonNumber.intValue().
 */
record Ratings(Map<String, Integer> starsByReviewer, String color) {

    /**
     * What ratings answers, bound by Jackson: {"id":N,"ratings":{"Reviewer1":5,...}}. Other members
     * are ignored; a "ratings" that is not an object fails the binding (ratings unavailable).
     */
    record Answer(Map<String, JsonNode> ratings) {}

    static Ratings unavailable(String color) {
        return new Ratings(Map.of(), color);
    }

    static Ratings of(Answer answer, String color) {
        if (answer == null || answer.ratings() == null) {
            return unavailable(color);
        }
        Map<String, Integer> stars = new HashMap<>();
        answer.ratings()
                .forEach(
                        (reviewer, value) -> {
                            if (value != null && value.isNumber()) {
                                stars.put(reviewer, value.intValue());
                            }
                        });
        return new Ratings(stars, color);
    }

    ProductReviews.Rating rating(String reviewer) {
        Integer stars = starsByReviewer.get(reviewer);
        return stars == null
                ? ProductReviews.Rating.UNAVAILABLE
                : new ProductReviews.Rating(stars, color, null);
    }
}
