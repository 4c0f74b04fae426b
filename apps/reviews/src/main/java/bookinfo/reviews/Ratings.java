package bookinfo.reviews;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * What the ratings service said for one product: stars by reviewer. A reviewer absent from the map
 * gets the "unavailable" rating, as upstream does (it keeps -1 for a reviewer that ratings did not list).
 */
record Ratings(Map<String, Integer> starsByReviewer) {

    static final Ratings UNAVAILABLE = new Ratings(Map.of());

    Integer stars(String reviewer) {
        return starsByReviewer.get(reviewer);
    }

    /**
     * Parses {"id":N,"ratings":{"Reviewer1":5,...}}. Numbers are truncated to int like upstream's
     * JsonNumber.intValue(); a non-number counts as missing (upstream would answer 500).
     */
    static Ratings parse(ObjectMapper json, byte[] body) throws IOException {
        JsonNode ratings = json.readTree(body).path("ratings");
        if (!ratings.isObject()) {
            return UNAVAILABLE;
        }
        Map<String, Integer> stars = new HashMap<>();
        for (Map.Entry<String, JsonNode> e : ratings.properties()) {
            if (e.getValue().isNumber()) {
                stars.put(e.getKey(), e.getValue().intValue());
            }
        }
        return new Ratings(stars);
    }
}
