package bookinfo.reviews.serving;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import bookinfo.reviews.RatingsPeer;
import bookinfo.reviews.RawHttp;
import bookinfo.reviews.RunningReviews;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * HTTP_HEADER_TIMEOUT_SECONDS and HTTP_MAX_CONNECTIONS on the wire: a head must be complete within
 * the timeout of its first byte (of the accept, for a connection's first head), however slowly it
 * trickles in; idle kept-alive connections keep their own timeout; requests being served are not
 * cut; beyond the connection limit new connections wait until slow ones are closed.
 */
@Timeout(90)
class HeadDeadlineTest {

    /** Head timeout 2 s, keep-alive 6 s. */
    static RunningReviews server;

    @BeforeAll
    static void start() {
        server =
                RunningReviews.start(
                        Map.of(
                                "HTTP_HEADER_TIMEOUT_SECONDS",
                                "2",
                                "HTTP_KEEPALIVE_TIMEOUT_SECONDS",
                                "6"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** Writes one piece every intervalMillis from another thread until the server closes. */
    static Thread trickle(Socket socket, String first, String piece, long intervalMillis) {
        Thread t =
                new Thread(
                        () -> {
                            try {
                                OutputStream out = socket.getOutputStream();
                                out.write(first.getBytes(StandardCharsets.ISO_8859_1));
                                out.flush();
                                for (int i = 0; i < 200; i++) {
                                    Thread.sleep(intervalMillis);
                                    out.write(piece.getBytes(StandardCharsets.ISO_8859_1));
                                    out.flush();
                                }
                            } catch (IOException | InterruptedException e) {
                                // closed by the server, or the test is over
                            }
                        });
        t.setDaemon(true);
        t.start();
        return t;
    }

    static void assertClosedAfter(RawHttp.Exchange e, long minMillis, long maxMillis, String what) {
        assertTrue(e.closed(), what + ": still open after " + e.millis() + " ms");
        assertFalse(e.text().contains("HTTP/1.1 200"), what + ": " + e.text());
        assertTrue(
                e.millis() >= minMillis && e.millis() <= maxMillis,
                what + ": closed after " + e.millis() + " ms");
    }

    @Test
    void aSilentNewConnectionIsClosed() throws IOException {
        try (Socket socket = new Socket("127.0.0.1", server.port)) {
            RawHttp.Exchange e = RawHttp.collect(socket, 8000, 8000);
            assertClosedAfter(e, 1500, 4000, "silent");
            assertEquals("", e.text(), "no request began: no answer");
        }
    }

    @Test
    void aHeadTricklingInIsClosedAtTheDeadlineNotPerRead() throws IOException {
        try (Socket socket = new Socket("127.0.0.1", server.port)) {
            trickle(socket, "GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ", "a", 300);
            RawHttp.Exchange e = RawHttp.collect(socket, 8000, 8000);
            assertClosedAfter(e, 1500, 4000, "trickled head");
            assertEquals(408, e.status(), e.text());
            assertTrue(e.text().endsWith("{\"error\":\"request timeout\"}"), e.text());
        }
    }

    @Test
    void aRequestLineTricklingInIsClosed() throws IOException {
        try (Socket socket = new Socket("127.0.0.1", server.port)) {
            trickle(socket, "G", "E", 300);
            assertClosedAfter(
                    RawHttp.collect(socket, 8000, 8000), 1500, 4000, "trickled request line");
        }
    }

    @Test
    void blankLinesDoNotKeepANewConnectionOpen() throws IOException {
        try (Socket socket = new Socket("127.0.0.1", server.port)) {
            trickle(socket, "\r\n", "\r\n", 300);
            assertClosedAfter(RawHttp.collect(socket, 8000, 8000), 1500, 4000, "blank lines");
        }
    }

    @Test
    void blankLinesDoNotKeepAKeptAliveConnectionOpenPastItsIdleTime() throws IOException {
        try (RawHttp http = new RawHttp(server.port)) {
            assertEquals(200, http.request("GET", "/health").status());
            Socket socket = http.socket();
            trickle(socket, "\r\n", "\r\n", 300);
            // At the latest keep-alive (6 s) plus the head timeout (2 s) after the response. Sooner
            // when the sweeper first saw the connection after its response, with blank lines
            // pending:
            // it cannot tell that from a new connection, and gives it the new connection's
            // deadline.
            RawHttp.Exchange e = RawHttp.collect(socket, 14000, 14000);
            assertClosedAfter(e, 1500, 9000, "blank lines after a response");
        }
    }

    @Test
    void anIdleKeptAliveConnectionKeepsItsKeepAliveTimeout() throws IOException {
        try (RawHttp http = new RawHttp(server.port)) {
            assertEquals(200, http.request("GET", "/health").status());
            long start = System.nanoTime();
            assertFalse(http.closedByServer(4000), "closed by the head deadline while idle");
            assertTrue(http.closedByServer(5000), "closed by the keep-alive timeout");
            double seconds = (System.nanoTime() - start) / 1e9;
            assertTrue(seconds > 5.5 && seconds < 9, "closed after " + seconds + " s");
        }
    }

    @Test
    void aSlowHeadAfterALongIdleIsTimedFromItsFirstByte() throws Exception {
        try (RawHttp http = new RawHttp(server.port)) {
            assertEquals(200, http.request("GET", "/health").status());
            Thread.sleep(3000); // longer than the head timeout, shorter than keep-alive
            Socket socket = http.socket();
            trickle(socket, "GET /health HTTP/1.1\r\n", "X", 300);
            assertClosedAfter(RawHttp.collect(socket, 8000, 8000), 1500, 4000, "slow second head");
        }
    }

    @Test
    void headsCompletedInTimeAreServedOverAndOver() throws IOException {
        try (RawHttp http = new RawHttp(server.port)) {
            for (int i = 0; i < 6; i++) {
                assertEquals(200, http.request("GET", "/health").status());
                try {
                    Thread.sleep(700);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    @Test
    void aRequestBeingServedIsNotCutByTheHeadDeadline() throws Exception {
        try (RatingsPeer peer = new RatingsPeer()) {
            peer.delayMillis = 2500;
            Map<String, String> env = new HashMap<>(peer.env());
            env.put("ENABLE_RATINGS", "true");
            env.put("HTTP_HEADER_TIMEOUT_SECONDS", "1");
            try (RunningReviews v2 = RunningReviews.start(env);
                    RawHttp http = new RawHttp(v2.port)) {
                // The first request on a new connection, served for longer than the head timeout
                // (the first call to ratings also loads the HTTP client: allow for a busy machine).
                http.socket().setSoTimeout(20_000);
                RawHttp.Response r = http.request("GET", "/reviews/0");
                assertEquals(200, r.status());
                assertTrue(r.text().contains("\"stars\":5"), r.text());
                assertFalse(http.closedByServer(600), "closed after a slow response");
                http.socket().setSoTimeout(5000);
                assertEquals(200, http.request("GET", "/health").status());
            }
        }
    }
}
