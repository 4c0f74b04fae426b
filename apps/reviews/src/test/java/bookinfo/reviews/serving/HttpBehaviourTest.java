package bookinfo.reviews.serving;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import bookinfo.reviews.RawHttp;
import bookinfo.reviews.RunningReviews;
import bookinfo.reviews.Scrape;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.eclipse.jetty.http.HttpCompliance;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.boot.web.embedded.jetty.JettyWebServer;

/** The common HTTP behaviour of docs/configuration.md: errors, HEAD, framing, keep-alive knobs. */
class HttpBehaviourTest {

    static RunningReviews keepAlive;
    static RunningReviews noKeepAlive;
    static RunningReviews tuned;

    @BeforeAll
    static void start() {
        keepAlive = RunningReviews.start(Map.of());
        noKeepAlive = RunningReviews.start(Map.of("HTTP_KEEPALIVE", "false"));
        tuned =
                RunningReviews.start(
                        Map.of("HTTP_NODELAY", "false", "HTTP_KEEPALIVE_TIMEOUT_SECONDS", "1"));
    }

    @AfterAll
    static void stop() {
        keepAlive.close();
        noKeepAlive.close();
        tuned.close();
    }

    @ParameterizedTest
    @CsvSource({
        "GET, /nope",
        "GET, /",
        "POST, /nope",
        "DELETE, /reviews",
        "GET, /health/",
        "GET, /error",
        "PUT, /error",
        "GET, /static/x.css",
        "TRACE, /nope",
        "OPTIONS, /nope"
    })
    void unknownPathsAre404JsonForEveryMethod(String method, String path) throws IOException {
        RawHttp.Response r = RawHttp.once(keepAlive.port, method, path);
        assertEquals(404, r.status());
        assertEquals("application/json", r.header("Content-Type"));
        assertEquals("{\"error\":\"not found\"}", r.text());
    }

    @ParameterizedTest
    @CsvSource({
        "POST, /health",
        "PUT, /reviews/0",
        "DELETE, /reviews/0",
        "PATCH, /metrics",
        "OPTIONS, /health",
        "TRACE, /reviews/0",
        "FOO, /health",
        "POST, /reviews/abc"
    })
    void otherMethodsOnKnownRoutesAre405JsonWithAllow(String method, String path)
            throws IOException {
        RawHttp.Response r = RawHttp.once(keepAlive.port, method, path, "Content-Length: 0");
        assertEquals(405, r.status());
        assertEquals("GET, HEAD", r.header("Allow"));
        assertEquals("application/json", r.header("Content-Type"));
        assertEquals("{\"error\":\"method not allowed\"}", r.text());
    }

    @ParameterizedTest
    @CsvSource({"GET, /%zz", "GET, /a|b", "G@T, /health"})
    void requestsJettyRejectsGet400JsonNotAnHtmlStackTrace(String method, String path)
            throws IOException {
        RawHttp.Response r = RawHttp.once(keepAlive.port, method, path);
        assertEquals(400, r.status());
        assertEquals("application/json", r.header("Content-Type"));
        assertEquals("{\"error\":\"bad request\"}", r.text());
    }

    @ParameterizedTest
    @CsvSource({"/health", "/reviews/0", "/metrics", "/nope"})
    void headAnswersLikeGetWithoutABody(String path) throws IOException {
        try (RawHttp http = new RawHttp(keepAlive.port)) {
            RawHttp.Response get = http.request("GET", path);
            RawHttp.Response head = http.request("HEAD", path);
            assertEquals(get.status(), head.status());
            assertEquals(get.header("Content-Type"), head.header("Content-Type"));
            if (!"/metrics".equals(path)) { // metrics change between the two requests
                assertEquals(get.header("Content-Length"), head.header("Content-Length"));
            }
            assertTrue(head.framed());
            // The next response on the same connection parses cleanly, so HEAD really sent no body.
            assertEquals(200, http.request("GET", "/health").status());
        }
    }

    @ParameterizedTest
    @CsvSource({
        "GET, /health",
        "GET, /reviews/0",
        "GET, /metrics",
        "GET, /nope",
        "GET, /reviews/x",
        "POST, /health",
        "OPTIONS, /reviews/0",
        "TRACE, /health",
        "GET, /%zz",
        "HEAD, /health"
    })
    void everyResponseIsFramedWithAndWithoutKeepAlive(String method, String path)
            throws IOException {
        for (RunningReviews server : new RunningReviews[] {keepAlive, noKeepAlive}) {
            try (RawHttp http = new RawHttp(server.port)) {
                RawHttp.Response r = http.request(method, path);
                assertTrue(
                        r.framed(),
                        method + " " + path + " on port " + server.port + ": " + r.headers());
            }
        }
    }

    @Test
    void keepAliveFalseSendsConnectionCloseAndReallyCloses() throws IOException {
        for (String path : new String[] {"/health", "/reviews/0", "/nope"}) {
            try (RawHttp http = new RawHttp(noKeepAlive.port)) {
                RawHttp.Response r = http.request("GET", path);
                assertEquals("close", r.header("Connection"), path);
                assertTrue(r.framed());
                assertTrue(http.closedByServer(2000), "server closed the connection after " + path);
            }
        }
    }

    @Test
    void keepAliveTrueServesManyRequestsOnOneConnection() throws IOException {
        try (RawHttp http = new RawHttp(keepAlive.port)) {
            // Many requests per connection: no per-connection cap applies.
            for (int i = 0; i < 150; i++) {
                RawHttp.Response r = http.request("GET", i % 2 == 0 ? "/health" : "/reviews/" + i);
                assertEquals(200, r.status());
                assertNull(r.header("Connection"), "request " + i);
            }
            assertFalse(http.closedByServer(200));
            assertEquals(200, http.request("GET", "/health").status());
        }
    }

    @Test
    void keepAliveTimeoutClosesIdleConnections() throws IOException {
        try (RawHttp http = new RawHttp(tuned.port)) {
            assertEquals(200, http.request("GET", "/health").status());
            long start = System.nanoTime();
            assertTrue(http.closedByServer(4000), "idle connection closed");
            double seconds = (System.nanoTime() - start) / 1e9;
            assertTrue(seconds > 0.7 && seconds < 3, "closed after " + seconds + " s");
        }
    }

    @Test
    void knobsReachJettysConnector() {
        Server defaults = server(keepAlive);
        ServerConnector connector = connector(defaults);
        assertTrue(connector.getAcceptedTcpNoDelay());
        assertEquals(60_000, connector.getIdleTimeout());
        assertEquals(1024, connector.getAcceptQueueSize());
        assertEquals(400, ((QueuedThreadPool) defaults.getThreadPool()).getMaxThreads());
        assertEquals(
                1024,
                defaults.getBean(NetworkConnectionLimit.class).getMaxNetworkConnectionCount());
        assertEquals(10_000, defaults.getBean(HeadDeadline.class).headMillis());
        assertTrue(http(defaults).isPersistentConnectionsEnabled());
        assertEquals(HttpCompliance.RFC7230, http(defaults).getHttpCompliance());
        assertFalse(http(defaults).getSendServerVersion());
        assertFalse(http(server(noKeepAlive)).isPersistentConnectionsEnabled());
        assertFalse(connector(server(tuned)).getAcceptedTcpNoDelay());
        assertEquals(1000, connector(server(tuned)).getIdleTimeout());
    }

    @Test
    void metricsCountRequestsByMethodRouteAndStatus() throws Exception {
        try (RunningReviews fresh = RunningReviews.start(Map.of())) {
            RawHttp.once(fresh.port, "GET", "/reviews/1");
            RawHttp.once(fresh.port, "GET", "/reviews/2");
            RawHttp.once(fresh.port, "HEAD", "/health");
            RawHttp.once(fresh.port, "POST", "/reviews/1");
            RawHttp.once(fresh.port, "GET", "/reviews/abc");
            RawHttp.once(fresh.port, "GET", "/random/" + System.nanoTime());
            RawHttp.once(fresh.port, "BREW", "/health");
            awaitMetrics(
                    fresh.port,
                    Map.of(
                            "http_requests_total{method=\"GET\",route=\"/reviews/:id\",status=\"200\"}",
                            2.0,
                            "http_requests_total{method=\"HEAD\",route=\"/health\",status=\"200\"}",
                            1.0,
                            "http_requests_total{method=\"POST\",route=\"/reviews/:id\",status=\"405\"}",
                            1.0,
                            "http_requests_total{method=\"GET\",route=\"unmatched\",status=\"404\"}",
                            2.0,
                            "http_requests_total{method=\"OTHER\",route=\"/health\",status=\"405\"}",
                            1.0,
                            "http_request_duration_seconds_bucket{method=\"GET\",route=\"/reviews/:id\",status=\"200\","
                                    + "le=\"+Inf\"}",
                            2.0,
                            "http_request_duration_seconds_count{method=\"GET\",route=\"/reviews/:id\",status=\"200\"}",
                            2.0));
            Map<String, Double> scrape =
                    Scrape.samples(RawHttp.once(fresh.port, "GET", "/metrics").text());
            assertTrue(
                    scrape.containsKey(
                            "http_requests_total{method=\"GET\",route=\"/metrics\",status=\"200\"}"),
                    scrape.keySet().toString());
            assertFalse(
                    scrape.keySet().stream().anyMatch(k -> k.contains("/random/")),
                    "raw paths never become labels");
            assertEquals(
                    6,
                    scrape.keySet().stream()
                            .filter(k -> k.startsWith("http_requests_total{"))
                            .count(),
                    scrape.keySet().toString());
        }
    }

    /**
     * A client that pipelines scrapes, stops reading and then resets the connection: the answer
     * whose write fails is counted 499 (the client left), as ratings counts it, not as a 500.
     */
    @Test
    void aScrapeWhoseClientLeftIsCounted499Not500() throws Exception {
        try (RunningReviews fresh = RunningReviews.start(Map.of())) {
            try (Socket socket = new Socket()) {
                socket.setReceiveBufferSize(4096);
                socket.connect(new InetSocketAddress("127.0.0.1", fresh.port), 2000);
                socket.getOutputStream()
                        .write(
                                "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
                                        .repeat(200)
                                        .getBytes(StandardCharsets.US_ASCII));
                Thread.sleep(1500); // the server's buffers are full: a write waits
                socket.setSoLinger(true, 0); // the close resets
            }
            Map<String, Double> samples =
                    awaitMetrics(
                            fresh.port,
                            Map.of(
                                    "http_requests_total{method=\"GET\",route=\"/metrics\",status=\"499\"}",
                                    1.0));
            assertFalse(
                    samples.keySet().stream().anyMatch(k -> k.contains("status=\"500\"")),
                    samples.keySet().toString());
        }
    }

    @Test
    void metricsFamiliesHaveTheCatalogueHelpTypeLabelsAndBuckets() throws Exception {
        RawHttp.once(keepAlive.port, "GET", "/reviews/0");
        String text = RawHttp.once(keepAlive.port, "GET", "/metrics").text();
        assertTrue(
                text.contains(
                        "# HELP http_requests_total HTTP requests served, by method, route pattern and status.\n"
                                + "# TYPE http_requests_total counter\n"),
                text);
        assertTrue(
                text.contains(
                        "# HELP http_request_duration_seconds Time to serve an HTTP request, by method, route "
                                + "pattern and status.\n# TYPE http_request_duration_seconds histogram\n"),
                text);
        assertFalse(text.contains("http_server_requests"), "Spring's own request metrics are off");
        Map<String, Double> samples = Scrape.samples(text);
        String series = "method=\"GET\",route=\"/reviews/:id\",status=\"200\"";
        List<Double> bounds =
                samples.keySet().stream()
                        .filter(
                                k ->
                                        k.startsWith(
                                                "http_request_duration_seconds_bucket{"
                                                        + series
                                                        + ",le=\""))
                        .map(k -> k.substring(k.indexOf(",le=\"") + 5, k.length() - 2))
                        .map(
                                le ->
                                        "+Inf".equals(le)
                                                ? Double.POSITIVE_INFINITY
                                                : Double.parseDouble(le))
                        .toList();
        assertEquals(
                List.of(
                        0.0005,
                        0.001,
                        0.0025,
                        0.005,
                        0.01,
                        0.025,
                        0.05,
                        0.1,
                        0.25,
                        0.5,
                        1.0,
                        2.5,
                        5.0,
                        10.0,
                        Double.POSITIVE_INFINITY),
                bounds);
        for (String key : samples.keySet()) {
            if (key.startsWith("http_requests_total{")
                    || key.startsWith("http_request_duration_seconds")) {
                String labels =
                        key.substring(key.indexOf('{') + 1, key.length() - 1)
                                .replaceAll("=\"[^\"]*\"", "");
                assertEquals(
                        key.contains("_bucket{") ? "method,route,status,le" : "method,route,status",
                        labels,
                        key);
            }
        }
    }

    /**
     * Polls /metrics until every expected sample has its value (a request is counted just after its
     * response); returns the samples by series. Values are compared as numbers: the Prometheus
     * library writes counts as "2.0".
     */
    private static Map<String, Double> awaitMetrics(int port, Map<String, Double> expected)
            throws Exception {
        long deadline = System.currentTimeMillis() + 3000;
        while (true) {
            RawHttp.Response r = RawHttp.once(port, "GET", "/metrics");
            assertEquals(200, r.status());
            assertEquals("text/plain;version=0.0.4;charset=utf-8", r.header("Content-Type"));
            Map<String, Double> samples = Scrape.samples(r.text());
            List<String> missing =
                    expected.entrySet().stream()
                            .filter(e -> !e.getValue().equals(samples.get(e.getKey())))
                            .map(Map.Entry::getKey)
                            .toList();
            if (missing.isEmpty()) {
                return samples;
            }
            if (System.currentTimeMillis() > deadline) {
                throw new AssertionError("missing " + missing + " in\n" + r.text());
            }
            Thread.sleep(20);
        }
    }

    private static Server server(RunningReviews running) {
        return ((JettyWebServer) ((WebServerApplicationContext) running.context).getWebServer())
                .getServer();
    }

    private static ServerConnector connector(Server server) {
        return (ServerConnector) server.getConnectors()[0];
    }

    private static HttpConfiguration http(Server server) {
        return connector(server)
                .getConnectionFactory(HttpConnectionFactory.class)
                .getHttpConfiguration();
    }
}
