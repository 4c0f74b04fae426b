package bookinfo.reviews;

import bookinfo.reviews.serving.ReviewsServer;
import java.util.HashMap;
import java.util.Map;
import org.springframework.context.ConfigurableApplicationContext;

/** The real application in this JVM on an ephemeral loopback port, configured from an env map. */
public final class RunningReviews implements AutoCloseable {

    public static final String POD = "test-pod";

    public final ConfigurableApplicationContext context;
    public final int port;

    private RunningReviews(ConfigurableApplicationContext context) {
        this.context = context;
        this.port = ReviewsServer.port(context);
    }

    public static RunningReviews start(Map<String, String> env) {
        Map<String, String> full = new HashMap<>();
        full.put("LISTEN_ADDRESS", "127.0.0.1");
        full.put("HOSTNAME", POD);
        full.put("LOG_LEVEL", "warn");
        full.putAll(env);
        return new RunningReviews(
                ReviewsServer.start(onEphemeralPort(ReviewsConfig.fromEnv(full))));
    }

    /** The same settings on port 0, which PORT does not allow. */
    static ReviewsConfig onEphemeralPort(ReviewsConfig c) {
        return new ReviewsConfig(
                0,
                c.listenAddress(),
                c.httpNoDelay(),
                c.httpKeepAlive(),
                c.httpKeepAliveTimeoutSeconds(),
                c.httpHeaderTimeoutSeconds(),
                c.httpMaxConnections(),
                c.upstreamKeepAlive(),
                c.upstreamMaxRequestsPerConnection(),
                c.shutdownTimeoutSeconds(),
                c.accessLog(),
                c.serverTiming(),
                c.logLevel(),
                c.enableRatings(),
                c.starColor(),
                c.clusterName(),
                c.podName(),
                c.serviceVersion(),
                c.ratingsBaseUrl());
    }

    @Override
    public void close() {
        context.close();
    }
}
