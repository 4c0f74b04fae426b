package bookinfo.reviews;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;

/**
 * The /reviews/<id> body, field order and types as upstream (CONTRACT.md: "id" is a string):
 * {"id":"0","podname":..,"clustername":..,"reviews":[{"reviewer":..,"text":..,"rating":{..}},..]}.
 *
 * Written field by field with Jackson's streaming generator (the ObjectMapper's factory, so strings
 * are escaped exactly as data binding would), not by binding records: the shape is fixed, and
 * data binding's reflection and serializer lookups cost about three times as much per body.
 */
final class ReviewsBody {

    static final String UNAVAILABLE = "Ratings service is currently unavailable";

    private static final String[][] REVIEWS = {
        {"Reviewer1", "An extremely entertaining play by Shakespeare. The slapstick humour is refreshing!"},
        {"Reviewer2", "Absolutely fun and entertaining. The play lacks thematic depth when compared to other plays by Shakespeare."},
    };

    /** The v2 body is 391 bytes; a first buffer this size is never regrown. */
    private static final int INITIAL_CAPACITY = 512;

    private final JsonFactory json;
    private final String podName;
    private final String clusterName;
    private final String starColor;

    ReviewsBody(ObjectMapper json, ReviewsConfig config) {
        this.json = json.getFactory();
        this.podName = config.podName();
        this.clusterName = config.clusterName();
        this.starColor = config.starColor();
    }

    /** ratings null means v1: no "rating" keys at all. */
    byte[] render(String id, Ratings ratings) throws IOException {
        ByteArrayBuilder out = new ByteArrayBuilder(INITIAL_CAPACITY);
        try (JsonGenerator g = json.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("id", id);
            g.writeStringField("podname", podName);
            g.writeStringField("clustername", clusterName);
            g.writeArrayFieldStart("reviews");
            for (String[] review : REVIEWS) {
                g.writeStartObject();
                g.writeStringField("reviewer", review[0]);
                g.writeStringField("text", review[1]);
                if (ratings != null) {
                    writeRating(g, ratings.stars(review[0]));
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        }
        return out.toByteArray();
    }

    /** A reviewer that ratings did not list gets the error, as upstream. */
    private void writeRating(JsonGenerator g, Integer stars) throws IOException {
        g.writeObjectFieldStart("rating");
        if (stars == null) {
            g.writeStringField("error", UNAVAILABLE);
        } else {
            g.writeNumberField("stars", stars);
            g.writeStringField("color", starColor);
        }
        g.writeEndObject();
    }
}
