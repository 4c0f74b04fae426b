package bookinfo.reviews.serving;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import bookinfo.reviews.RatingsPeer;
import bookinfo.reviews.RawHttp;
import bookinfo.reviews.RunningReviews;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * How many TCP data segments one response takes on a real loopback socket: the client socket's
 * tcp_info data_segs_in, read with iproute2's ss (Linux). On loopback every write the server makes
 * arrives as its own segment (the MTU is 64 KiB), so this counts the server's writes per response.
 * (Bodies larger than Jetty's output buffer, such as /metrics, take more than one write.)
 * DESIGN.md, "Writes per response".
 */
class WritesPerResponseTest {

    private static final Pattern DATA_SEGS_IN = Pattern.compile("\\bdata_segs_in:(\\d+)");

    static RatingsPeer peer;
    static RunningReviews tuned;
    static RunningReviews nagle;
    static RunningReviews noKeepAlive;

    @BeforeAll
    static void start() throws IOException {
        assumeTrue(
                Files.isExecutable(Path.of("/usr/bin/ss"))
                        || Files.isExecutable(Path.of("/bin/ss")),
                "needs iproute2's ss");
        peer = new RatingsPeer();
        Map<String, String> v2 = new HashMap<>(peer.env());
        v2.put("ENABLE_RATINGS", "true");
        tuned = RunningReviews.start(v2);
        v2.put("HTTP_NODELAY", "false");
        nagle = RunningReviews.start(v2);
        v2.put("HTTP_NODELAY", "true");
        v2.put("HTTP_KEEPALIVE", "false");
        noKeepAlive = RunningReviews.start(v2);
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable c : new AutoCloseable[] {tuned, nagle, noKeepAlive, peer}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                // best effort
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"/health", "/reviews/0", "/nope"})
    void oneWritePerKeptAliveResponseWithAndWithoutNodelay(String path) throws Exception {
        for (RunningReviews server : new RunningReviews[] {tuned, nagle}) {
            try (RawHttp http = new RawHttp(server.port)) {
                for (int i = 0; i < 3; i++) {
                    http.request("GET", path); // warm: class loading, JIT, the ratings pool
                }
                for (int i = 0; i < 5; i++) {
                    long before = dataSegmentsIn(http.localPort(), server.port);
                    RawHttp.Response r = http.request("GET", path);
                    assertTrue(r.framed());
                    // One segment: with Nagle on (HTTP_NODELAY=false) there is no second write that
                    // could wait for the client's delayed ACK.
                    assertEquals(
                            1,
                            dataSegmentsIn(http.localPort(), server.port) - before,
                            path + " on port " + server.port);
                }
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"/health", "/reviews/0"})
    void oneWritePerResponseWithKeepAliveOff(String path) throws Exception {
        try (Socket socket = new Socket("127.0.0.1", noKeepAlive.port)) {
            socket.setSoTimeout(5000);
            socket.getOutputStream()
                    .write(
                            ("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                                    .getBytes(StandardCharsets.ISO_8859_1));
            byte[] all =
                    socket.getInputStream().readAllBytes(); // the server closes after the response
            assertTrue(new String(all, StandardCharsets.ISO_8859_1).contains("Connection: close"));
            assertEquals(1, dataSegmentsIn(socket.getLocalPort(), noKeepAlive.port), path);
        }
    }

    /**
     * data_segs_in of the client socket from localPort to remotePort (ss omits the field while it
     * is 0). Both ports: another connection of this machine may use the same local port number
     * towards another peer.
     */
    static long dataSegmentsIn(int localPort, int remotePort)
            throws IOException, InterruptedException {
        Process ss =
                new ProcessBuilder(
                                "ss",
                                "-tinH",
                                "state",
                                "all",
                                "( sport = :" + localPort + " and dport = :" + remotePort + " )")
                        .redirectErrorStream(true)
                        .start();
        String out = new String(ss.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, ss.waitFor(), out);
        assertTrue(out.contains(":" + localPort), "ss shows the socket: " + out);
        Matcher m = DATA_SEGS_IN.matcher(out);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }
}
