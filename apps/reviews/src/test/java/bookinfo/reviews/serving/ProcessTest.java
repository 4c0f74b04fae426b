package bookinfo.reviews.serving;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import bookinfo.reviews.RatingsPeer;
import bookinfo.reviews.RawHttp;
import bookinfo.reviews.ReviewsProcess;
import java.io.IOException;
import java.net.ConnectException;
import java.net.Socket;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What only a real process shows: exit status on bad config, SIGTERM drain, stdout access log. */
class ProcessTest {

    /** One case per kind of value; ReviewsConfigTest covers the whole grammar in-process. */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "HTTP_NODELAY                         | maybe  | reviews: invalid HTTP_NODELAY=\"maybe\": want true or false",
                "HTTP_KEEPALIVE_TIMEOUT_SECONDS       | 0      | reviews: invalid HTTP_KEEPALIVE_TIMEOUT_SECONDS=\"0\": want an integer from 1 to 3600",
                "UPSTREAM_MAX_REQUESTS_PER_CONNECTION | many   | reviews: invalid UPSTREAM_MAX_REQUESTS_PER_CONNECTION=\"many\": want an integer from 1 to 1000000",
                "ENABLE_RATINGS                       | yes    | reviews: invalid ENABLE_RATINGS=\"yes\": want true or false",
                "PORT                                 | 70000  | reviews: invalid PORT=\"70000\": want an integer from 1 to 65535",
                "HTTP_HEADER_TIMEOUT_SECONDS          | 0      | reviews: invalid HTTP_HEADER_TIMEOUT_SECONDS=\"0\": want an integer from 1 to 300",
                "HTTP_MAX_CONNECTIONS                 | lots   | reviews: invalid HTTP_MAX_CONNECTIONS=\"lots\": want an integer from 1 to 100000",
            })
    void badKnobExitsWithStatus2AndOneLineNamingVariableAndValue(
            String variable, String value, String message) throws Exception {
        try (ReviewsProcess p = ReviewsProcess.start(Map.of(variable, value))) {
            assertEquals(2, p.awaitExit(20_000));
            assertEquals(List.of(message), p.stderr);
            assertEquals(List.of(), p.stdout);
        }
    }

    @Test
    void sigtermFinishesInFlightRequestsClosesKeptAliveConnectionsAndExits0() throws Exception {
        try (RatingsPeer peer = new RatingsPeer()) {
            peer.delayMillis = 1500;
            Map<String, String> env = new HashMap<>(peer.env());
            env.putAll(
                    Map.of(
                            "ENABLE_RATINGS",
                            "true",
                            "SHUTDOWN_TIMEOUT_SECONDS",
                            "5",
                            "ACCESS_LOG",
                            "true"));
            try (ReviewsProcess p = ReviewsProcess.start(env)) {
                p.awaitListening(60_000);
                RawHttp idle = new RawHttp(p.port);
                assertEquals(200, idle.request("GET", "/health").status());

                RawHttp busy = new RawHttp(p.port);
                CompletableFuture<RawHttp.Response> inFlight =
                        CompletableFuture.supplyAsync(
                                () -> {
                                    try {
                                        return busy.request("GET", "/reviews/0");
                                    } catch (IOException e) {
                                        throw new RuntimeException(e);
                                    }
                                });
                assertTrue(peer.awaitArrival(10_000) != null, "ratings call under way");
                long signalled = System.nanoTime();
                p.sigterm();

                assertThrows(
                        ConnectException.class,
                        () -> awaitRefused(p.port, 3000),
                        "stops accepting");
                // Jetty's graceful shutdown closes a kept-alive connection that is idle when the
                // drain starts, at once, before any request is sent on it.
                assertTrue(
                        idle.closedByServer(1000),
                        "an idle kept-alive connection is closed as the drain starts");
                assertFalse(inFlight.isDone(), "closed at once, not after the drain");
                RawHttp.Response r = inFlight.get(10, TimeUnit.SECONDS);
                assertEquals(200, r.status());
                assertTrue(
                        r.text().contains("\"rating\":{\"stars\":5,\"color\":\"black\"}"),
                        r.text());
                assertEquals(
                        "close",
                        r.header("Connection"),
                        "the drained connection is not offered for reuse");
                assertTrue(busy.closedByServer(5000));
                assertEquals(0, p.awaitExit(6000));
                double seconds = (System.nanoTime() - signalled) / 1e9;
                assertTrue(seconds < 5, "exited after " + seconds + " s");
                idle.close();
                busy.close();

                assertTrue(
                        p.stdout.stream()
                                .anyMatch(
                                        l ->
                                                l.matches(
                                                        "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z reviews GET /health 200 \\d+\\.\\d{3}")),
                        "access log line on stdout: " + p.stdout);
                assertTrue(
                        p.stdout.stream()
                                .anyMatch(
                                        l ->
                                                l.matches(
                                                        ".* reviews GET /reviews/0 200 (1[5-9]\\d{2}|[2-9]\\d{3})\\.\\d{3}")),
                        "in-flight request logged with its duration of more than 1.5 s: "
                                + p.stdout);
                assertTrue(
                        p.stderr.stream()
                                .anyMatch(
                                        l ->
                                                "reviews: shutting down, draining for up to 5 s"
                                                        .equals(l)),
                        String.join("\n", p.stderr));
            }
        }
    }

    @Test
    void shutdownTimeoutBoundsTheDrain() throws Exception {
        try (RatingsPeer peer = new RatingsPeer()) {
            peer.delayMillis = 30_000;
            Map<String, String> env = new HashMap<>(peer.env());
            env.putAll(Map.of("ENABLE_RATINGS", "true", "SHUTDOWN_TIMEOUT_SECONDS", "1"));
            try (ReviewsProcess p = ReviewsProcess.start(env)) {
                p.awaitListening(60_000);
                RawHttp busy = new RawHttp(p.port);
                busy.send("GET", "/reviews/0");
                assertTrue(peer.awaitArrival(10_000) != null, "ratings call under way");
                long signalled = System.nanoTime();
                p.sigterm();
                assertEquals(1, p.awaitExit(5000), "a drain cut short must not exit 0");
                double seconds = (System.nanoTime() - signalled) / 1e9;
                assertTrue(seconds >= 0.9 && seconds < 2.5, "exited after " + seconds + " s");
                busy.close();
            }
        }
    }

    /** Connects until the listener is gone; throws the ConnectException once it is. */
    private static void awaitRefused(int port, long timeoutMillis)
            throws IOException, InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (System.currentTimeMillis() < deadline) {
            try (Socket ignored = new Socket("127.0.0.1", port)) {
                Thread.sleep(20);
            }
        }
    }
}
