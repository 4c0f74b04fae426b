package bookinfo.reviews;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * ReviewsBody writes the body with Jackson's streaming generator; its bytes must be those of data
 * binding (what it replaced), also for names and colours that need escaping.
 */
class ReviewsBodyTest {

    static final ObjectMapper JSON = new ObjectMapper();

    static final String[][] REVIEWS = {
        {"Reviewer1", "An extremely entertaining play by Shakespeare. The slapstick humour is refreshing!"},
        {"Reviewer2", "Absolutely fun and entertaining. The play lacks thematic depth when compared to other plays by Shakespeare."},
    };

    /** The same document built as maps in field order and written by data binding (as records were). */
    static String bound(String id, String pod, String cluster, String color, Ratings ratings) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", id);
        body.put("podname", pod);
        body.put("clustername", cluster);
        List<Object> reviews = new ArrayList<>();
        for (String[] r : REVIEWS) {
            Map<String, Object> review = new LinkedHashMap<>();
            review.put("reviewer", r[0]);
            review.put("text", r[1]);
            if (ratings != null) {
                Map<String, Object> rating = new LinkedHashMap<>();
                Integer stars = ratings.stars(r[0]);
                if (stars == null) {
                    rating.put("error", ReviewsBody.UNAVAILABLE);
                } else {
                    rating.put("stars", stars);
                    rating.put("color", color);
                }
                review.put("rating", rating);
            }
            reviews.add(review);
        }
        body.put("reviews", reviews);
        // As bytes, like the former writeValueAsBytes: the UTF-8 writer escapes surrogate pairs.
        return new String(JSON.writeValueAsBytes(body), StandardCharsets.UTF_8);
    }

    @ParameterizedTest
    @ValueSource(strings = {"plain", "quote\"back\\slash", "tab\tnew\nline\u0001ctl\u007f", "ünïcødé ✓ 🎭", "</script>", ""})
    void bytesAreThoseOfDataBinding(String text) throws IOException {
        ReviewsConfig config = ReviewsConfig.fromEnv(Map.of("HOSTNAME", "pod-" + text, "CLUSTER_NAME", text,
                "STAR_COLOR", text, "ENABLE_RATINGS", "true"));
        ReviewsBody body = new ReviewsBody(JSON, config);
        Ratings one = new Ratings(Map.of("Reviewer2", -3));
        for (Ratings ratings : new Ratings[] {null, Ratings.UNAVAILABLE, one, new Ratings(Map.of("Reviewer1", 5,
                "Reviewer2", Integer.MIN_VALUE))}) {
            for (String id : new String[] {"0", "-2147483648", "7"}) {
                assertEquals(bound(id, "pod-" + text, text, text, ratings),
                        new String(body.render(id, ratings), StandardCharsets.UTF_8), text);
            }
        }
    }
}
