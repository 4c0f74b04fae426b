package bookinfo.reviews;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
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
     *
     * Streams the tokens instead of building a JsonNode tree (which cost twice as much), with the
     * tree's outcome in every case: the whole top-level value must be valid JSON (anything after it
     * is ignored, as readTree does); when a key repeats, its last value wins; a body that is not an
     * object, or whose last "ratings" is not an object, means UNAVAILABLE.
     */
    static Ratings parse(JsonFactory json, byte[] body) throws IOException {
        try (JsonParser p = json.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                // Not an object (or empty): there is no "ratings" member, whatever follows.
                return UNAVAILABLE;
            }
            Map<String, Integer> stars = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                boolean isRatings = p.currentName().equals("ratings");
                JsonToken value = p.nextToken();
                if (!isRatings) {
                    skipValue(p);
                } else if (value == JsonToken.START_OBJECT) {
                    stars = readStars(p);
                } else {
                    stars = null;
                    skipValue(p);
                }
            }
            return stars == null ? UNAVAILABLE : new Ratings(stars);
        }
    }

    /** The members of the "ratings" object, the parser on its START_OBJECT; ends on its END_OBJECT. */
    private static Map<String, Integer> readStars(JsonParser p) throws IOException {
        Map<String, Integer> stars = new HashMap<>();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String reviewer = p.currentName();
            if (p.nextToken().isNumeric()) {
                stars.put(reviewer, intValue(p));
            } else {
                stars.remove(reviewer);
                skipValue(p);
            }
        }
        return stars;
    }

    /** JsonNode.intValue() of the number node readTree would have built: Java's narrowing conversions. */
    private static int intValue(JsonParser p) throws IOException {
        return switch (p.getNumberType()) {
            case INT -> p.getIntValue();
            case LONG -> (int) p.getLongValue();
            case BIG_INTEGER -> p.getBigIntegerValue().intValue();
            default -> (int) p.getDoubleValue();
        };
    }

    /**
     * Steps over the value the parser is on, reading every token so that malformed JSON anywhere in
     * the body still fails the parse (string contents included, which skipChildren would not decode).
     */
    private static void skipValue(JsonParser p) throws IOException {
        int depth = 0;
        JsonToken t = p.currentToken();
        while (true) {
            if (t == null) {
                throw new IOException("truncated JSON");
            }
            if (t.isStructStart()) {
                depth++;
            } else if (t.isStructEnd()) {
                depth--;
            } else if (t == JsonToken.VALUE_STRING) {
                p.getText();
            }
            if (depth == 0) {
                return;
            }
            t = p.nextToken();
        }
    }
}
