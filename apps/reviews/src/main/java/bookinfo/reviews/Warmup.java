package bookinfo.reviews;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.HttpHeaders;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.stereotype.Component;

/**
 * Runs the /reviews/<id> work once before the connector accepts its first connection: one call
 * through the pooled ratings client (to a throwaway loopback stand-in, never to ratings itself),
 * the parse of its answer, and the body rendering with and without ratings.
 *
 * Without it the first real request loads and initialises some 300 classes (the HttpClient exec
 * chain and connection, Jackson's tree parser and record serializers) from the nested jar, and
 * every concurrent request waits on the same class initialisation: measured on a freshly started
 * stack next to seven others on 2 CPUs, the first /reviews/0 calls all took 0.8 to 1.6 s and
 * finished together, which productpage then passed on to its clients. /health never takes that
 * path, so a stack reported ready while reviews was still cold.
 *
 * It runs from afterSingletonsInstantiated, i.e. before Spring starts the web server's connector,
 * so /health answers only once the work is done. Nothing reaches the request metrics or the access
 * log: no request goes through Tomcat.
 */
@Component
class Warmup implements SmartInitializingSingleton {

    private static final Logger log = LoggerFactory.getLogger(Warmup.class);

    static final String STAND_IN_BODY = "{\"id\":0,\"ratings\":{\"Reviewer1\":5,\"Reviewer2\":4}}";

    private final RatingsClient ratings;
    private final ReviewsBody body;
    private final boolean ratingsEnabled;

    /** What the stand-in call produced (null before, or for v1 which never calls ratings). */
    volatile Ratings fetched;
    volatile boolean done;

    Warmup(RatingsClient ratings, ReviewsBody body, ReviewsConfig config) {
        this.ratings = ratings;
        this.body = body;
        this.ratingsEnabled = config.enableRatings();
    }

    @Override
    public void afterSingletonsInstantiated() {
        long start = System.nanoTime();
        try {
            if (ratingsEnabled) {
                fetched = fetchFromStandIn();
                body.render("0", fetched);
                body.render("0", Ratings.UNAVAILABLE);
            } else {
                body.render("0", null);
            }
            done = true;
        } catch (IOException | RuntimeException e) {
            // Only a cost saved is lost: the first requests pay it instead.
            log.warn("warm-up failed: {}", e.toString());
        }
        log.debug("warm-up took {} ms", (System.nanoTime() - start) / 1_000_000);
    }

    private Ratings fetchFromStandIn() throws IOException {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            server.setSoTimeout(5000);
            Thread peer = new Thread(() -> answerOnce(server), "reviews-warmup-peer");
            peer.setDaemon(true);
            peer.start();
            RatingsClient.Peer standIn = RatingsClient.Peer.of("http://127.0.0.1:" + server.getLocalPort());
            ClassicHttpRequest get = standIn.get("/ratings/0");
            // The stand-in goes away: its connection must not stay in the pool.
            get.setHeader(HttpHeaders.CONNECTION, "close");
            return ratings.execute(standIn, get);
        }
    }

    private static void answerOnce(ServerSocket server) {
        try (Socket socket = server.accept()) {
            socket.setSoTimeout(5000);
            InputStream in = socket.getInputStream();
            int matched = 0;
            byte[] end = {'\r', '\n', '\r', '\n'};
            while (matched < end.length) {
                int b = in.read();
                if (b < 0) {
                    return;
                }
                matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
            }
            byte[] payload = STAND_IN_BODY.getBytes(StandardCharsets.US_ASCII);
            OutputStream out = socket.getOutputStream();
            out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + payload.length
                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(payload);
            out.flush();
        } catch (IOException e) {
            // The client side reports the failure.
        }
    }
}
