package bookinfo.reviews;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * Entry point: parse the environment (a bad knob exits 2 before Spring starts), then run the Spring
 * Boot application it configures (ReviewsServer).
 */
@SpringBootApplication
public class ReviewsApplication {

    public static void main(String[] args) {
        ReviewsConfig config;
        try {
            config = ReviewsConfig.fromEnv(System.getenv());
        } catch (BadConfigException e) {
            // Before Spring or logging starts: one line, status 2 (docs/configuration.md).
            System.err.println(ReviewsConfig.SERVICE + ": " + e.getMessage());
            System.exit(2);
            return;
        }
        try {
            ReviewsServer.startWithExitStatus(config);
        } catch (RuntimeException e) {
            System.err.println(ReviewsConfig.SERVICE + ": failed to start: " + rootCause(e));
            System.exit(1);
        }
    }

    private static Throwable rootCause(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null
                && cause.getCause() != cause) { // NOPMD - identity: a cause that is itself
            cause = cause.getCause();
        }
        return cause;
    }
}
