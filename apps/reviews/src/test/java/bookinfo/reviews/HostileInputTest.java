package bookinfo.reviews;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * reviews' own refusals, on raw sockets; what every service answers is tested over all four in
 * tests/e2e. A refused request is closed and the request hidden after it never runs (GET
 * /reviews/4242: had it run, "4242" would be in the output).
 */
@Timeout(60)
class HostileInputTest {

    static final String SMUGGLED = "GET /reviews/4242 HTTP/1.1\r\nHost: x\r\n\r\n";

    static RunningReviews server;

    @BeforeAll
    static void start() {
        server = RunningReviews.start(Map.of("HTTP_HEADER_TIMEOUT_SECONDS", "2"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static RawHttp.Exchange send(String request) throws IOException {
        return RawHttp.exchange(server.port, request);
    }

    static void assertRefused(RawHttp.Exchange e, int status, String what) {
        assertEquals(status, e.status(), what + ": " + e.text());
        assertEquals(1, e.responses(), what + ": " + e.text());
        assertFalse(e.text().contains("4242"), what + ": the hidden request ran: " + e.text());
        assertTrue(
                e.text().toLowerCase(Locale.ROOT).contains("\r\nconnection: close\r\n"),
                what + ": " + e.text());
        assertTrue(e.closed(), what + ": connection left open");
    }

    // ---- TransferCodingRefusal: what Jetty's parser lets through

    @Test
    void transferEncodingInHttp10Is400() throws IOException {
        RawHttp.Exchange e =
                send(
                        "POST /health HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked"
                                + "\r\n\r\n0\r\n\r\n"
                                + SMUGGLED);
        assertEquals(400, e.status(), e.text());
        assertFalse(e.text().contains("4242"), e.text());
        assertTrue(e.closed());
    }

    @Test
    void absoluteFormWithAnotherHostIs400() throws IOException {
        assertRefused(
                send("GET http://elsewhere/health HTTP/1.1\r\nHost: x\r\n\r\n" + SMUGGLED),
                400,
                "mismatch");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "/static//etc/passwd",
                "//etc/passwd",
                "/reviews/../../etc/passwd",
                "/static/../../x"
            })
    void pathTricksAreJson404(String path) throws IOException {
        RawHttp.Exchange e = send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
        assertTrue(e.status() == 404 || e.status() == 400, path + ": " + e.text());
        assertFalse(e.text().toLowerCase(Locale.ROOT).contains("\r\nlocation:"), e.text());
        assertTrue(
                e.text().endsWith("{\"error\":\"not found\"}")
                        || e.text().endsWith("{\"error\":\"bad request\"}"),
                e.text());
    }
}
