package bookinfo.reviews;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;

/**
 * The GET /reviews/{id} body, written by Jackson; field order and types as docs/contract.md ("id"
 * is a string, "clustername" the string "null" when CLUSTER_NAME is unset).
 */
@JsonPropertyOrder({"id", "podname", "clustername", "reviews"})
record ProductReviews(String id, String podname, String clustername, List<Review> reviews) {

    /** One review; v1 has no "rating" key at all. */
    @JsonPropertyOrder({"reviewer", "text", "rating"})
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Review(String reviewer, String text, Rating rating) {}

    /** {"stars":N,"color":".."} or {"error":"Ratings service is currently unavailable"}. */
    @JsonPropertyOrder({"stars", "color", "error"})
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Rating(Integer stars, String color, String error) {

        static final Rating UNAVAILABLE =
                new Rating(null, null, "Ratings service is currently unavailable");
    }
}
