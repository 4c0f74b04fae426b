package bookinfo.reviews;

import java.util.HashMap;
import java.util.Map;
import org.springframework.context.ConfigurableApplicationContext;

/** The real application in this JVM on an ephemeral loopback port, configured from an env map. */
final class RunningReviews implements AutoCloseable {

    static final String POD = "test-pod";

    final ConfigurableApplicationContext context;
    final int port;

    private RunningReviews(ConfigurableApplicationContext context) {
        this.context = context;
        this.port = ReviewsServer.port(context);
    }

    static RunningReviews start(Map<String, String> env) {
        return start(env, Hooks.system());
    }

    static RunningReviews start(Map<String, String> env, Hooks hooks) {
        Map<String, String> full = new HashMap<>();
        full.put("LISTEN_ADDRESS", "127.0.0.1");
        full.put("HOSTNAME", POD);
        full.put("LOG_LEVEL", "warn");
        full.putAll(env);
        return new RunningReviews(
                ReviewsServer.start(ReviewsConfig.fromEnv(full).withPort(0), hooks));
    }

    @Override
    public void close() {
        context.close();
    }
}
