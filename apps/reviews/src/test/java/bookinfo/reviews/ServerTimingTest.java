package bookinfo.reviews;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The Server-Timing header: reviews' own time, its ratings call, what ratings reported. */
class ServerTimingTest {

    private static final Pattern METRIC = Pattern.compile("([^;,\\s]+);dur=([0-9]+\\.?[0-9]*)");

    static RatingsPeer peer;
    static RunningReviews v2;
    static RunningReviews off;

    @BeforeAll
    static void start() throws IOException {
        peer = new RatingsPeer();
        v2 = RunningReviews.start(ReviewsRouteTest.with(peer.env(), "ENABLE_RATINGS", "true"));
        off =
                RunningReviews.start(
                        ReviewsRouteTest.with(
                                peer.env(), "ENABLE_RATINGS", "true", "SERVER_TIMING", "false"));
    }

    @AfterAll
    static void stop() {
        v2.close();
        off.close();
        peer.close();
    }

    @BeforeEach
    void resetPeer() {
        peer.reset();
    }

    /** Name to milliseconds, in header order; fails on anything that is not name;dur=ms. */
    static Map<String, Double> timings(RawHttp.Response r) {
        String header = r.header("Server-Timing");
        assertNotNull(header, "no Server-Timing header");
        Map<String, Double> out = new LinkedHashMap<>();
        for (String entry : header.split(",")) {
            Matcher m = METRIC.matcher(entry.strip());
            assertTrue(m.matches(), header);
            assertNull(out.put(m.group(1), Double.valueOf(m.group(2))), header);
        }
        return out;
    }

    @Test
    void v2ReportsItsTimeTheRatingsWaitAndWhatRatingsSaid() throws IOException {
        peer.serverTiming = "app;dur=0.5";
        peer.delayMillis = 50;
        Map<String, Double> got = timings(RawHttp.once(v2.port, "GET", "/reviews/0"));
        assertEquals(List.of("app", "ratings", "ratings.app"), List.copyOf(got.keySet()));
        assertEquals(0.5, got.get("ratings.app"));
        assertTrue(got.get("ratings") >= 50, got.toString());
        assertTrue(got.get("app") >= got.get("ratings"), got.toString());
    }

    /**
     * The clock starts at the head's first byte (Jetty's parser): a head sent in two parts 100 ms
     * apart counts at least 50 ms (Jetty may read the first part late on a busy machine).
     */
    @Test
    void appCoversJettyReadingTheHead() throws IOException, InterruptedException {
        try (RawHttp http = new RawHttp(v2.port)) {
            OutputStream out = http.socket().getOutputStream();
            out.write("GET /health HTTP/1.1\r\n".getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            Thread.sleep(100);
            out.write("Host: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            Map<String, Double> got = timings(http.read(false));
            assertTrue(got.get("app") >= 50, got.toString());
        }
    }

    @Test
    void aFailedRatingsCallStillReportsItsWait() throws IOException {
        peer.status = 503;
        peer.body = "{\"error\":\"Service unavailable\"}";
        peer.serverTiming = "app;dur=0.125";
        RawHttp.Response r = RawHttp.once(v2.port, "GET", "/reviews/0");
        assertEquals(200, r.status());
        Map<String, Double> got = timings(r);
        assertEquals(List.of("app", "ratings", "ratings.app"), List.copyOf(got.keySet()));
        assertEquals(0.125, got.get("ratings.app"));
    }

    @ParameterizedTest
    @CsvSource({
        "GET, /health, 200",
        "GET, /metrics, 200",
        "GET, /reviews/abc, 404",
        "GET, /nowhere, 404",
        "POST, /reviews/0, 405",
        "HEAD, /reviews/0, 200"
    })
    void everyRouteCarriesItsOwnTime(String method, String path, int status) throws IOException {
        RawHttp.Response r = RawHttp.once(v2.port, method, path);
        assertEquals(status, r.status());
        assertTrue(timings(r).containsKey("app"));
    }

    @Test
    void serverTimingFalseSendsNone() throws IOException {
        peer.serverTiming = "app;dur=0.5";
        for (String path : List.of("/reviews/0", "/nowhere")) {
            RawHttp.Response r = RawHttp.once(off.port, "GET", path);
            assertNull(r.header("Server-Timing"), path);
        }
    }

    @Test
    void forwardedKeepsNameAndDurOnly() {
        assertEquals(
                List.of("ratings.app;dur=1.5", "ratings.db;dur=2"),
                ServerTiming.forwarded(
                        "ratings", "app;dur=1.5;desc=\"x\", cache;desc=no-dur, db;dur=\"2\""));
        assertEquals(List.of(), ServerTiming.forwarded("ratings", null));
        assertEquals(
                List.of(), ServerTiming.forwarded("ratings", "bad name;dur=1, ;dur=2, x;dur=-1"));
        StringBuilder many = new StringBuilder("m0;dur=1");
        for (int i = 1; i < 100; i++) {
            many.append(", m").append(i).append(";dur=1");
        }
        assertEquals(
                ServerTiming.MAX_FORWARDED,
                ServerTiming.forwarded("ratings", many.toString()).size());
    }
}
