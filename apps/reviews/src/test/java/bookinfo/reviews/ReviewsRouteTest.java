package bookinfo.reviews;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** GET /reviews/<id> and /health for v1, v2 and v3 against a real ratings peer. */
class ReviewsRouteTest {

    static final String R1 =
            "{\"reviewer\":\"Reviewer1\",\"text\":\"An extremely entertaining play by Shakespeare. "
                    + "The slapstick humour is refreshing!\"";
    static final String R2 =
            "{\"reviewer\":\"Reviewer2\",\"text\":\"Absolutely fun and entertaining. The play lacks "
                    + "thematic depth when compared to other plays by Shakespeare.\"";
    static final String UNAVAILABLE =
            ",\"rating\":{\"error\":\"Ratings service is currently unavailable\"}}";

    static RatingsPeer peer;
    static RunningReviews v1;
    static RunningReviews v2;
    static RunningReviews v3;

    @BeforeAll
    static void start() throws IOException {
        peer = new RatingsPeer();
        v1 = RunningReviews.start(Map.of("ENABLE_RATINGS", "false", "SERVICE_VERSION", "v1"));
        v2 =
                RunningReviews.start(
                        with(
                                peer.env(),
                                "ENABLE_RATINGS",
                                "true",
                                "STAR_COLOR",
                                "black",
                                "CLUSTER_NAME",
                                "east"));
        v3 = RunningReviews.start(with(peer.env(), "ENABLE_RATINGS", "true", "STAR_COLOR", "red"));
    }

    @AfterAll
    static void stop() {
        v1.close();
        v2.close();
        v3.close();
        peer.close();
    }

    @BeforeEach
    void resetPeer() {
        peer.reset();
    }

    static Map<String, String> with(Map<String, String> base, String... pairs) {
        Map<String, String> env = new HashMap<>(base);
        for (int i = 0; i < pairs.length; i += 2) {
            env.put(pairs[i], pairs[i + 1]);
        }
        return env;
    }

    static String expected(String id, String cluster, String rating1, String rating2) {
        return "{\"id\":\""
                + id
                + "\",\"podname\":\""
                + RunningReviews.POD
                + "\",\"clustername\":\""
                + cluster
                + "\",\"reviews\":["
                + R1
                + rating1
                + ","
                + R2
                + rating2
                + "]}";
    }

    static String stars(int n, String color) {
        return ",\"rating\":{\"stars\":" + n + ",\"color\":\"" + color + "\"}}";
    }

    @Test
    void v2BodyIsTheContractBodyByteForByte() throws IOException {
        RawHttp.Response r = RawHttp.once(v2.port, "GET", "/reviews/0");
        assertEquals(200, r.status());
        assertEquals("application/json", r.header("Content-Type"));
        String contract =
                "{\"id\":\"0\",\"podname\":\"test-pod\",\"clustername\":\"east\",\"reviews\":[{\"reviewer\":"
                        + "\"Reviewer1\",\"text\":\"An extremely entertaining play by Shakespeare. The slapstick humour is "
                        + "refreshing!\",\"rating\":{\"stars\":5,\"color\":\"black\"}},{\"reviewer\":\"Reviewer2\",\"text\":"
                        + "\"Absolutely fun and entertaining. The play lacks thematic depth when compared to other plays by "
                        + "Shakespeare.\",\"rating\":{\"stars\":4,\"color\":\"black\"}}]}";
        assertEquals(contract, r.text());
        assertEquals(
                List.of("/ratings/0"),
                peer.arrivals().stream().map(RatingsPeer.Arrival::path).toList());
    }

    @Test
    void v1HasNoRatingKeysAndNeverCallsRatings() throws IOException {
        RawHttp.Response r = RawHttp.once(v1.port, "GET", "/reviews/0");
        assertEquals(200, r.status());
        assertEquals(expected("0", "null", "}", "}"), r.text());
        assertEquals(List.of(), peer.arrivals());
    }

    @Test
    void v3ShowsRedStarsAndAsksRatingsForTheRequestedProduct() throws IOException {
        peer.body = "{\"id\":42,\"ratings\":{\"Reviewer1\":1,\"Reviewer2\":3}}";
        RawHttp.Response r = RawHttp.once(v3.port, "GET", "/reviews/42");
        assertEquals(expected("42", "null", stars(1, "red"), stars(3, "red")), r.text());
        assertEquals("/ratings/42", peer.arrivals().get(0).path());
    }

    @ParameterizedTest
    @ValueSource(strings = {"007", "+7"})
    void idIsAJavaIntEchoedAsAString(String id) throws IOException {
        RawHttp.Response r = RawHttp.once(v1.port, "GET", "/reviews/" + id);
        assertEquals(200, r.status());
        assertTrue(r.text().startsWith("{\"id\":\"7\","), r.text());
    }

    @Test
    void negativeAndExtremeIntsAreValid() throws IOException {
        assertTrue(
                RawHttp.once(v1.port, "GET", "/reviews/-1").text().startsWith("{\"id\":\"-1\","));
        assertEquals(200, RawHttp.once(v1.port, "GET", "/reviews/2147483647").status());
        assertEquals(200, RawHttp.once(v1.port, "GET", "/reviews/-2147483648").status());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "/reviews/abc",
                "/reviews/2147483648",
                "/reviews/0x10",
                "/reviews/1.5",
                "/reviews/",
                "/reviews",
                "/reviews/1/2",
                "/reviews/%20"
            })
    void nonIntIdsAndMissingIdsAre404Json(String path) throws IOException {
        RawHttp.Response r = RawHttp.once(v2.port, "GET", path);
        assertEquals(404, r.status());
        assertEquals("application/json", r.header("Content-Type"));
        assertEquals("{\"error\":\"not found\"}", r.text());
        assertEquals(List.of(), peer.arrivals(), "no ratings call for a bad id");
    }

    @Test
    void healthIsTheContractBody() throws IOException {
        RawHttp.Response r = RawHttp.once(v1.port, "GET", "/health");
        assertEquals(200, r.status());
        assertEquals("application/json", r.header("Content-Type"));
        assertEquals("{\"status\":\"Reviews is healthy\"}", r.text());
    }

    @ParameterizedTest
    @ValueSource(ints = {500, 503, 404, 302})
    void ratingsErrorStatusMakesEveryReviewUnavailable(int status) throws IOException {
        peer.status = status;
        peer.body = "{\"error\":\"Service unavailable\"}";
        RawHttp.Response r = RawHttp.once(v2.port, "GET", "/reviews/0");
        assertEquals(200, r.status());
        assertEquals(expected("0", "east", UNAVAILABLE, UNAVAILABLE), r.text());
        assertEquals(1, peer.arrivals().size(), "one attempt, no retry on an error status");
    }

    @ParameterizedTest
    @ValueSource(strings = {"not json", "[1,2]", "{\"id\":0}", "{\"ratings\":\"none\"}", ""})
    void unusableRatingsBodiesMakeEveryReviewUnavailable(String body) throws IOException {
        peer.body = body;
        RawHttp.Response r = RawHttp.once(v2.port, "GET", "/reviews/0");
        assertEquals(expected("0", "east", UNAVAILABLE, UNAVAILABLE), r.text());
    }

    @Test
    void aReviewerMissingFromRatingsIsUnavailableAloneLikeUpstream() throws IOException {
        peer.body = "{\"id\":0,\"ratings\":{\"Reviewer2\":2}}";
        assertEquals(
                expected("0", "east", UNAVAILABLE, stars(2, "black")),
                RawHttp.once(v2.port, "GET", "/reviews/0").text());
        peer.body = "{\"id\":0,\"ratings\":{\"Reviewer1\":\"five\",\"Reviewer2\":3.9}}";
        assertEquals(
                expected("0", "east", UNAVAILABLE, stars(3, "black")),
                RawHttp.once(v2.port, "GET", "/reviews/0").text());
    }

    @Test
    void unreachableRatingsMakesEveryReviewUnavailable() throws IOException {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        try (RunningReviews orphan =
                RunningReviews.start(
                        Map.of(
                                "ENABLE_RATINGS",
                                "true",
                                "RATINGS_HOSTNAME",
                                "127.0.0.1",
                                "RATINGS_SERVICE_PORT",
                                Integer.toString(closedPort)))) {
            RawHttp.Response r = RawHttp.once(orphan.port, "GET", "/reviews/0");
            assertEquals(200, r.status());
            assertEquals(expected("0", "null", UNAVAILABLE, UNAVAILABLE), r.text());
        }
    }

    @Test
    void redStarsGiveUpOnRatingsAfterTwoAndAHalfSeconds() throws IOException {
        peer.delayMillis = 6000;
        long start = System.nanoTime();
        RawHttp.Response r = RawHttp.once(v3.port, "GET", "/reviews/0");
        double seconds = (System.nanoTime() - start) / 1e9;
        assertEquals(expected("0", "null", UNAVAILABLE, UNAVAILABLE), r.text());
        assertTrue(seconds >= 2.4 && seconds < 4.0, "took " + seconds + " s");
        assertEquals(1, peer.arrivals().size(), "a timeout is not retried");
    }

    @Test
    void contractHeadersArePropagatedToRatings() throws IOException {
        List<String> sent = new ArrayList<>();
        for (String name : RatingsClient.PROPAGATED) {
            sent.add(name + ": value-of-" + name);
        }
        sent.add("x-not-propagated: nope");
        RawHttp.once(v2.port, "GET", "/reviews/0", sent.toArray(String[]::new));
        RatingsPeer.Arrival arrival = peer.arrivals().get(0);
        for (String name : RatingsClient.PROPAGATED) {
            assertEquals("value-of-" + name, arrival.headers().getFirst(name), name);
        }
        assertNull(arrival.headers().getFirst("x-not-propagated"));
    }

    @Test
    void endUserReachesRatingsAndIsNotRememberedForTheNextRequest() throws IOException {
        RawHttp.once(v2.port, "GET", "/reviews/0", "end-user: jason", "cookie: session=abc");
        RawHttp.once(v2.port, "GET", "/reviews/0");
        List<RatingsPeer.Arrival> arrivals = peer.arrivals();
        assertEquals("jason", arrivals.get(0).headers().getFirst("end-user"));
        assertEquals("session=abc", arrivals.get(0).headers().getFirst("cookie"));
        assertNull(arrivals.get(1).headers().getFirst("end-user"));
        assertNull(arrivals.get(1).headers().getFirst("cookie"));
    }
}
