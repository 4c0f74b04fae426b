package bookinfo.reviews;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The outbound pool: reuse, retirement after N requests, and the no-reuse mode. */
class UpstreamConnectionTest {

    RatingsPeer peer;

    @BeforeEach
    void startPeer() throws IOException {
        peer = new RatingsPeer();
    }

    @AfterEach
    void stopPeer() {
        peer.close();
    }

    private RunningReviews reviews(String... pairs) {
        Map<String, String> env = new HashMap<>(peer.env());
        env.put("ENABLE_RATINGS", "true");
        for (int i = 0; i < pairs.length; i += 2) {
            env.put(pairs[i], pairs[i + 1]);
        }
        return RunningReviews.start(env);
    }

    private void call(RunningReviews reviews, int times) throws IOException {
        try (RawHttp http = new RawHttp(reviews.port)) {
            for (int i = 0; i < times; i++) {
                RawHttp.Response r = http.request("GET", "/reviews/0");
                assertTrue(r.text().contains("\"stars\":5"), r.text());
            }
        }
    }

    @Test
    void connectionsAreRetiredAfterMaxRequests() throws IOException {
        try (RunningReviews reviews = reviews("UPSTREAM_MAX_REQUESTS_PER_CONNECTION", "3")) {
            call(reviews, 7);
        }
        assertEquals(List.of(3, 3, 1), peer.requestsPerConnection());
    }

    @Test
    void keptAliveConnectionsAreReusedUpToTheDefaultLimit() throws IOException {
        try (RunningReviews reviews = reviews()) {
            call(reviews, 101);
        }
        assertEquals(List.of(100, 1), peer.requestsPerConnection());
        assertFalse(
                peer.arrivals().stream()
                        .anyMatch(
                                a -> "close".equalsIgnoreCase(a.headers().getFirst("Connection"))));
    }

    @Test
    void upstreamKeepAliveFalseOpensAConnectionPerCallAndSaysClose() throws IOException {
        try (RunningReviews reviews = reviews("UPSTREAM_KEEPALIVE", "false")) {
            call(reviews, 4);
        }
        assertEquals(List.of(1, 1, 1, 1), peer.requestsPerConnection());
        for (RatingsPeer.Arrival a : peer.arrivals()) {
            assertEquals("close", a.headers().getFirst("Connection"));
        }
    }

    @Test
    void outboundSocketsFollowHttpNodelay() {
        assertTrue(RatingsHttpClient.socketConfig(ReviewsConfig.fromEnv(Map.of())).isTcpNoDelay());
        assertFalse(
                RatingsHttpClient.socketConfig(
                                ReviewsConfig.fromEnv(Map.of("HTTP_NODELAY", "false")))
                        .isTcpNoDelay());
    }
}
