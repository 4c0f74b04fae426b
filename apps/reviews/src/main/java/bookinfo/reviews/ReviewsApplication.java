package bookinfo.reviews;

import bookinfo.reviews.serving.ReviewsServer;
import bookinfo.reviews.serving.WebConfig;
import jakarta.servlet.DispatcherType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;

/**
 * Entry point: parse the environment (a bad knob exits 2 before Spring starts), then run the
 * application; the wire, the server and the drain are the serving package's.
 */
@SpringBootApplication
public class ReviewsApplication {

    public static void main(String[] args) {
        ReviewsConfig config;
        try {
            config = ReviewsConfig.fromEnv(System.getenv());
        } catch (ReviewsConfig.BadConfigException e) {
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

    /** The Server-Timing header, on the error page too; off with SERVER_TIMING=false. */
    @Bean
    FilterRegistrationBean<ServerTiming> serverTimingRegistration(ReviewsConfig config) {
        FilterRegistrationBean<ServerTiming> registration =
                new FilterRegistrationBean<>(new ServerTiming());
        registration.setOrder(WebConfig.INSIDE_WHOLE_RESPONSES);
        registration.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ERROR);
        registration.setEnabled(config.serverTiming());
        return registration;
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
