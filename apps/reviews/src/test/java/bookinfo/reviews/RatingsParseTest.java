package bookinfo.reviews;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Ratings.parse streams the tokens; it must decide every body exactly as the JsonNode tree it
 * replaced (readTree, then path("ratings")), whose outcome is computed here as the reference.
 */
class RatingsParseTest {

    static final ObjectMapper JSON = new ObjectMapper();

    /** The former parser: null stands for an exception (the call then counts as failed). */
    static Map<String, Integer> byTree(byte[] body) {
        try {
            JsonNode ratings = JSON.readTree(body).path("ratings");
            if (!ratings.isObject()) {
                return Map.of();
            }
            Map<String, Integer> stars = new HashMap<>();
            for (Map.Entry<String, JsonNode> e : ratings.properties()) {
                if (e.getValue().isNumber()) {
                    stars.put(e.getKey(), e.getValue().intValue());
                }
            }
            return stars;
        } catch (IOException e) {
            return null;
        }
    }

    static Map<String, Integer> byStream(byte[] body) {
        try {
            return Ratings.parse(JSON.getFactory(), body).starsByReviewer();
        } catch (IOException e) {
            return null;
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"id\":0,\"ratings\":{\"Reviewer1\":5,\"Reviewer2\":4}}",
        "{\"ratings\":{\"Reviewer1\":5}}",
        "{\"ratings\":{}}",
        "{\"id\":0}",
        "{}",
        "",
        "   ",
        "not json",
        "[1,2]",
        "5",
        "\"ratings\"",
        "null",
        "{\"ratings\":\"none\"}",
        "{\"ratings\":null}",
        "{\"ratings\":[{\"Reviewer1\":5}]}",
        "{\"ratings\":{\"Reviewer1\":\"five\",\"Reviewer2\":3.9}}",
        "{\"ratings\":{\"Reviewer1\":-2.7,\"Reviewer2\":1e3}}",
        "{\"ratings\":{\"Reviewer1\":4294967301,\"Reviewer2\":18446744073709551621}}",
        "{\"ratings\":{\"Reviewer1\":1e400,\"Reviewer2\":-1e400}}",
        "{\"ratings\":{\"Reviewer1\":true,\"Reviewer2\":null}}",
        "{\"ratings\":{\"Reviewer1\":{\"stars\":5},\"Reviewer2\":[4]}}",
        "{\"ratings\":{\"Reviewer1\":5,\"Reviewer1\":3}}",
        "{\"ratings\":{\"Reviewer1\":5,\"Reviewer1\":\"x\"}}",
        "{\"ratings\":{\"Reviewer1\":5},\"ratings\":{\"Reviewer2\":2}}",
        "{\"ratings\":{\"Reviewer1\":5},\"ratings\":7}",
        "{\"ratings\":7,\"ratings\":{\"Reviewer2\":2}}",
        "{\"Ratings\":{\"Reviewer1\":5}}",
        "{\"id\":{\"ratings\":{\"Reviewer1\":5}}}",
        "{\"ratings\":{\"Reviewer1\":5}} trailing",
        "{\"ratings\":{\"Reviewer1\":5}}{\"ratings\":{}}",
        "{\"ratings\":{\"Reviewer1\":5}",
        "{\"ratings\":{\"Reviewer1\":5},",
        "{\"ratings\":{\"Reviewer1\":5},\"x\":tru}",
        "{\"ratings\":{\"Reviewer1\":5},\"x\":\"bad \\q escape\"}",
        "{\"x\":\"\\u00e9\\n\",\"ratings\":{\"R\\u00e9viewer\":2}}",
        "{\"ratings\":{\"Reviewer1\":5},\"x\":[1,{\"y\":[]}],\"z\":-0.5}",
        "{\"ratings\":{\"Reviewer1\":05}}",
        "{\"ratings\":{\"Reviewer1\":NaN}}",
        "{'ratings':{'Reviewer1':5}}",
    })
    void streamingDecidesLikeTheTree(String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        assertEquals(byTree(bytes), byStream(bytes), body);
    }
}
