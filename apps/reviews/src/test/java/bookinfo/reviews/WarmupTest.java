package bookinfo.reviews;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The ratings-call path runs once at start, before the first request (Warmup): a cold first
 * /reviews/<id> took over 1 s on a loaded host while concurrent ones waited on it.
 */
class WarmupTest {

    @Test
    void startRunsTheRatingsPathAgainstAStandInNotRatings() throws IOException {
        try (RatingsPeer peer = new RatingsPeer()) {
            Map<String, String> env = new HashMap<>(peer.env());
            env.put("ENABLE_RATINGS", "true");
            try (RunningReviews reviews = RunningReviews.start(env)) {
                Warmup warmup = reviews.context.getBean(Warmup.class);
                assertTrue(warmup.done);
                // The whole exchange ran: client, connection, response parsing, JSON.
                assertEquals(5, warmup.fetched.stars("Reviewer1"));
                assertEquals(4, warmup.fetched.stars("Reviewer2"));
                // Ratings itself saw nothing, and the stand-in's connection was not pooled: the
                // first real call opens one connection to ratings and is answered.
                assertEquals(List.of(), peer.arrivals());
                try (RawHttp http = new RawHttp(reviews.port)) {
                    RawHttp.Response r = http.request("GET", "/reviews/0");
                    assertTrue(r.text().contains("\"stars\":5"), r.text());
                }
                assertEquals(List.of(1), peer.requestsPerConnection());
            }
        }
    }

    @Test
    void v1RendersOnlyAndCallsNothing() {
        try (RunningReviews reviews = RunningReviews.start(Map.of("ENABLE_RATINGS", "false"))) {
            Warmup warmup = reviews.context.getBean(Warmup.class);
            assertTrue(warmup.done);
            assertNull(warmup.fetched);
        }
    }
}
