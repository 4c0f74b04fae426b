package bookinfo.reviews;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Hostile request framing on raw sockets: every request whose framing is ambiguous is answered 400
 * (501 for an unknown transfer coding, as RFC 9112 asks) with Connection: close, the connection is
 * closed, and a request hidden after it never runs. The hidden request is GET /reviews/4242: had it
 * run, "4242" would be in the output.
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

    // ---- Content-Length

    @ParameterizedTest
    @ValueSource(
            strings = {
                "5, 40",
                "-1",
                "5abc",
                "0x5",
                "+5",
                "1 0",
                "5.0",
                "",
                "99999999999999999999"
            })
    void contentLengthThatIsNotOneDecimalNumberIs400(String value) throws IOException {
        RawHttp.Exchange e =
                send(
                        "POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: "
                                + value
                                + "\r\n\r\nhello"
                                + SMUGGLED);
        assertRefused(e, 400, "Content-Length: " + value);
    }

    @ParameterizedTest
    @ValueSource(strings = {"5", "40"})
    void repeatedContentLengthIs400EvenWhenEqual(String second) throws IOException {
        RawHttp.Exchange e =
                send(
                        "POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: "
                                + second
                                + "\r\n\r\nhello"
                                + SMUGGLED);
        assertRefused(e, 400, "Content-Length 5 and " + second);
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void contentLengthAndTransferEncodingTogetherAre400AndClosed(boolean lengthFirst)
            throws IOException {
        // Jetty's parser refuses it before any application code runs.
        String body = "0\r\n\r\n" + SMUGGLED;
        String length = "Content-Length: " + body.length() + "\r\n";
        String coding = "Transfer-Encoding: chunked\r\n";
        RawHttp.Exchange e =
                send(
                        "GET /health HTTP/1.1\r\nHost: x\r\n"
                                + (lengthFirst ? length + coding : coding + length)
                                + "\r\n"
                                + body);
        assertRefused(e, 400, "Content-Length with Transfer-Encoding");
        assertTrue(e.text().endsWith("{\"error\":\"bad request\"}"), e.text());
    }

    // ---- Transfer-Encoding

    @ParameterizedTest
    @ValueSource(
            strings = {
                "Transfer-Encoding: chunked, chunked",
                "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
                "Transfer-Encoding: chunked, gzip",
                "Transfer-Encoding:\r\n chunked",
                "Transfer-Encoding:\r\n\tchunked",
                "\u000bTransfer-Encoding: chunked",
                "Transfer-Encoding : chunked",
                "Transfer-Encoding:\u000bchunked"
            })
    void transferEncodingOtherThanExactlyChunkedIs400(String field) throws IOException {
        RawHttp.Exchange e =
                send(
                        "POST /health HTTP/1.1\r\nHost: x\r\n"
                                + field
                                + "\r\n\r\n0\r\n\r\n"
                                + SMUGGLED);
        assertRefused(e, 400, field);
    }

    @Test
    void foldedTransferEncodingBesideContentLengthIs400() throws IOException {
        String body = "0\r\n\r\n" + SMUGGLED;
        RawHttp.Exchange e =
                send(
                        "POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: "
                                + body.length()
                                + "\r\nTransfer-Encoding:\r\n chunked\r\n\r\n"
                                + body);
        assertRefused(e, 400, "folded Transfer-Encoding");
    }

    @ParameterizedTest
    @ValueSource(strings = {"gzip, chunked", "identity", "xchunked", "deflate"})
    void unknownTransferCodingsAre400(String codings) throws IOException {
        RawHttp.Exchange e =
                send(
                        "POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "
                                + codings
                                + "\r\n\r\n0\r\n\r\n"
                                + SMUGGLED);
        assertRefused(e, 400, codings);
    }

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

    // ---- chunked bodies: refused before any byte of them is read, whatever their syntax

    @ParameterizedTest
    @ValueSource(
            strings = {
                "5;ext=1\r\nhello\r\n0\r\n\r\n",
                "5zz\r\nhello\r\n0\r\n\r\n",
                "5 \r\nhello\r\n0\r\n\r\n",
                "5\nhello\r\n0\r\n\r\n",
                "5\r\nhelloXX0\r\n\r\n",
                "-5\r\nhello\r\n0\r\n\r\n",
                "0x5\r\nhello\r\n0\r\n\r\n",
                "80000000\r\nhello\r\n0\r\n\r\n",
                "10000000000\r\nhello\r\n0\r\n\r\n",
                "\r\nhello\r\n0\r\n\r\n"
            })
    void everyChunkedBodyIs411(String body) throws IOException {
        for (String method : new String[] {"GET /health", "POST /reviews/0", "GET /nope"}) {
            RawHttp.Exchange e =
                    send(
                            method
                                    + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                                    + body
                                    + SMUGGLED);
            assertRefused(
                    e, 411, method + " with " + body.replace("\r", "\\r").replace("\n", "\\n"));
            assertTrue(e.text().endsWith("{\"error\":\"length required\"}"), e.text());
        }
    }

    @Test
    void aHugeChunkIsRefusedAndClosedAtOnce() throws IOException {
        // Answered and closed at once: the 411 carries "Connection: close", so Jetty does not read
        // the 2 GiB chunk to find the next request.
        byte[] request =
                ("POST /reviews/0 HTTP/1.1\r\nHost: x\r\n"
                                + "Transfer-Encoding: chunked\r\n\r\n7fffffff\r\nabc")
                        .getBytes(StandardCharsets.ISO_8859_1);
        RawHttp.Exchange answer = RawHttp.exchange(server.port, request, 1000, 8000);
        assertTrue(answer.text().startsWith("HTTP/1.1 411 "), answer.text());
        assertTrue(answer.millis() < 1000, "answered after " + answer.millis() + " ms");
        RawHttp.Exchange e = RawHttp.exchange(server.port, request, 6000, 8000);
        assertRefused(e, 411, "huge chunk");
        assertTrue(e.millis() < 1000, "closed after " + e.millis() + " ms");
    }

    @Test
    void aLongChunkedBodyIsRefusedWithoutReadingIt() throws Exception {
        StringBuilder request =
                new StringBuilder(
                        "POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
        String chunk = "x".repeat(65536);
        for (int i = 0; i < 33; i++) { // 2 MiB + 64 KiB
            request.append("10000\r\n").append(chunk).append("\r\n");
        }
        request.append("0\r\n\r\n").append(SMUGGLED);
        byte[] bytes = request.toString().getBytes(StandardCharsets.ISO_8859_1);
        try (Socket socket = new Socket("127.0.0.1", server.port)) {
            // Written from another thread: the server answers while the body is still arriving.
            Thread writer =
                    new Thread(
                            () -> {
                                try {
                                    socket.getOutputStream().write(bytes);
                                } catch (IOException e) {
                                    // the server closed after answering
                                }
                            });
            writer.start();
            RawHttp.Exchange e = RawHttp.collect(socket, 3000, 8000);
            writer.join(5000);
            assertRefused(e, 411, "2 MiB + 64 KiB body");
        }
    }

    // ---- header lines at the buffer sizes that split requests in other servers, and beyond
    // the head limit (server.max-http-request-header-size, 8 KiB)

    @ParameterizedTest
    @ValueSource(ints = {4095, 4096, 4097, 8000})
    void longHeaderLinesBelowTheHeadLimitAreOneRequest(int length) throws IOException {
        RawHttp.Exchange e =
                send(
                        "GET /reviews/1 HTTP/1.1\r\nHost: x\r\nX: "
                                + "a".repeat(length - 3)
                                + "\r\njwt: /reviews/4242 HTTP/1.1\r\n\r\n");
        assertEquals(1, e.responses(), e.text());
        assertEquals(200, e.status());
        assertFalse(e.text().contains("4242"), e.text());
    }

    @ParameterizedTest
    @ValueSource(ints = {8191, 8192, 8193, 16384, 65536})
    void headsBeyondTheLimitAre431AndClosed(int length) throws IOException {
        RawHttp.Exchange e =
                send(
                        "GET /reviews/1 HTTP/1.1\r\nHost: x\r\nX: "
                                + "a".repeat(length - 3)
                                + "\r\njwt: /reviews/4242 HTTP/1.1\r\n\r\n");
        assertRefused(e, 431, "header line of " + length);
    }

    // ---- Host, field values

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "Host: a\r\nHost: a\r\n",
                "Host: a\r\nHost: b\r\n",
                "Host: a b\r\n",
                "Host: a:b\r\n",
                "Host: a:80:80\r\n",
                "Host: [::1\r\n",
                "Host: a@b\r\n",
                "Host: a/b\r\n",
                "Host: a\\b\r\n"
            })
    // Not "Host: a,b": RFC 3986's reg-name allows sub-delims, "," among them, so it is a valid
    // host by the grammar, and Jetty serves it (Tomcat allowed only letters, digits, "-" and ".").
    // Two Host lines are refused above; reviews uses Host for nothing.
    void http11HostMissingRepeatedOrInvalidIs400(String hostLines) throws IOException {
        RawHttp.Exchange e = send("GET /health HTTP/1.1\r\n" + hostLines + "\r\n" + SMUGGLED);
        assertRefused(e, 400, hostLines.isEmpty() ? "no Host" : hostLines.strip());
    }

    @Test
    void absoluteFormWithAnotherHostIs400() throws IOException {
        assertRefused(
                send("GET http://elsewhere/health HTTP/1.1\r\nHost: x\r\n\r\n" + SMUGGLED),
                400,
                "mismatch");
    }

    @Test
    void validHostsAndHttp10WithoutHostAreServed() throws IOException {
        for (String host :
                new String[] {
                    "x", "x:9080", "127.0.0.1", "[::1]:80", "reviews.default.svc.cluster.local"
                }) {
            RawHttp.Exchange e = send("GET /health HTTP/1.1\r\nHost: " + host + "\r\n\r\n");
            assertEquals(200, e.status(), host + ": " + e.text());
        }
        RawHttp.Exchange e = send("GET /health HTTP/1.0\r\n\r\n");
        assertEquals(200, e.status(), e.text());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "X: a\u0000b",
                "X: a\rb",
                "X: a\r",
                "X\u0000: a",
                "X: \u0000",
                "Cookie: a=\u0001"
            })
    void nulBareCrAndControlsInFieldsAre400(String field) throws IOException {
        RawHttp.Exchange e =
                send("GET /health HTTP/1.1\r\nHost: x\r\n" + field + "\r\n\r\n" + SMUGGLED);
        assertRefused(e, 400, field.replace("\r", "\\r").replace("\u0000", "\\0"));
    }

    // ---- HTTP/0.9, bare LF, truncated heads, paths

    @ParameterizedTest
    @ValueSource(
            strings = {
                "GET /health\r\n",
                "GET /health\n",
                "GET /reviews/0\r\n",
                "POST /health\r\n",
                "GET /nope\r\n",
                "OPTIONS *\r\n"
            })
    void http09RequestsAre505AndClosedAtOnce(String request) throws IOException {
        // Jetty answers in HTTP/1.1, which a client of either version can tell from a body.
        RawHttp.Exchange e =
                RawHttp.exchange(
                        server.port, request.getBytes(StandardCharsets.ISO_8859_1), 2000, 3000);
        assertEquals(505, e.status(), e.text());
        assertEquals(1, e.responses(), e.text());
        assertTrue(e.text().endsWith("{\"error\":\"http version not supported\"}"), e.text());
        assertTrue(e.closed(), "closed");
        assertTrue(e.millis() < 1000, "closed after " + e.millis() + " ms");
    }

    @Test
    void bareLfLineEndsAreServedPromptly() throws IOException {
        RawHttp.Exchange e = send("GET /health HTTP/1.1\nHost: x\n\n");
        assertEquals(200, e.status(), e.text());
        assertTrue(e.millis() < 1000);
    }

    @Test
    void aTruncatedHeadIsNeverServed() throws IOException {
        try (Socket socket = new Socket("127.0.0.1", server.port)) {
            socket.getOutputStream()
                    .write(
                            "GET /reviews/4242 HTTP/1.1\r\nHost: x\r\n"
                                    .getBytes(StandardCharsets.ISO_8859_1));
            socket.shutdownOutput();
            RawHttp.Exchange e = RawHttp.collect(socket, 3000, 3000);
            assertEquals("", e.text());
            assertTrue(e.closed());
        }
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
